package remote

import (
	"context"
	"net"
	"net/url"
	"slices"
	"time"
)

// WatchDNS keeps the router's backends equal to the addresses a DNS name
// resolves to (a Kubernetes headless Service lists one A record per ready
// pod): spec's URL names the host and port, each address becomes a backend
// with spec's options; the name is re-resolved every interval, new
// addresses are added and vanished ones removed (their calls in flight
// finish). It returns when ctx ends. lookup is net.DefaultResolver's
// LookupHost when nil.
func (r *Router) WatchDNS(ctx context.Context, spec Spec, every time.Duration, lookup func(context.Context, string) ([]string, error)) {
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	u, err := url.Parse(spec.URL)
	if err != nil {
		r.log.Error("backend DNS: malformed URL", "url", spec.URL, "err", err)
		return
	}
	host, port := u.Hostname(), u.Port()
	mine := map[string]bool{} // backend names this watch added
	resolve := func() {
		lctx, cancel := context.WithTimeout(ctx, r.cfg.HealthTimeout)
		addrs, err := lookup(lctx, host)
		cancel()
		if err != nil {
			// Keep the backends as they are: the health checks judge them.
			r.log.Warn("backend DNS: resolving failed; keeping the backends found before", "host", host, "err", err)
			return
		}
		slices.Sort(addrs)
		want := map[string]bool{}
		for _, a := range addrs {
			hostport := a
			if port != "" {
				hostport = net.JoinHostPort(a, port)
			}
			s := spec
			v := *u
			v.Host = hostport
			s.URL = v.String()
			want[s.Name()] = true
			if !mine[s.Name()] {
				if err := r.Add(s); err == nil {
					mine[s.Name()] = true
					r.log.Info("backend DNS: added", "host", host, "backend", s.Name())
				}
			}
		}
		for name := range mine {
			if !want[name] {
				r.Remove(name)
				delete(mine, name)
				r.log.Info("backend DNS: removed", "host", host, "backend", name)
			}
		}
	}
	resolve()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			resolve()
		}
	}
}
