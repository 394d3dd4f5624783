// Upkeep: the health checks, and forgetting programs.

package remote

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/pitstop-llm/pitstop/cluster"
)

// ProgramDone forgets a program: its rank and where its context is.
func (r *Router) ProgramDone(program string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgetLocked(program)
}

func (r *Router) forgetLocked(program string) {
	delete(r.attained, program)
	r.dropUseLocked(program)
	for _, h := range r.holds {
		h.Forget(program)
	}
	if pe, ok := r.bal.(cluster.ProgramEnder); ok {
		pe.ProgramDone(program)
	}
}

func (r *Router) healthLoop() {
	defer close(r.done)
	t := time.NewTicker(r.cfg.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			bs := slices.Clone(r.backends)
			r.mu.Unlock()
			var wg sync.WaitGroup
			for _, b := range bs {
				wg.Add(1)
				go func() { defer wg.Done(); r.checkOne(context.Background(), b) }()
			}
			wg.Wait()
		}
	}
}

// checkOne health-checks a backend and logs a change of its state.
func (r *Router) checkOne(ctx context.Context, b *Backend) {
	started := time.Now()
	err := b.check(ctx, r.cfg.HealthTimeout)
	if err != nil && b.servedSince(started.Add(-r.cfg.HealthInterval)) {
		// A check that failed while calls succeed (a slow answer under
		// load): the calls are the better evidence.
		r.log.Debug("health check failed while calls succeed: the backend stays up", "backend", b.name, "err", err)
		return
	}
	up := err == nil
	why := ""
	if err != nil {
		why = err.Error()
		r.m.errors.WithLabelValues(b.name, "health").Inc()
	}
	first := b.checkedOnce()
	if b.setUp(up, why) || first {
		if up {
			r.log.Info("backend up", "backend", b.name, "kind", b.spec.Kind, "models", b.info().Models)
		} else {
			r.log.Warn("backend unreachable: the health check keeps trying it", "backend", b.name, "err", why)
		}
	}
	r.m.up.WithLabelValues(b.name).Set(boolFloat(up))
	r.m.limit.WithLabelValues(b.name).Set(float64(b.adm.currentLimit()))
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// checkedOnce reports, the first time only, that the backend's first
// check is being recorded.
func (b *Backend) checkedOnce() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	first := !b.seen
	b.seen = true
	return first
}
