package remote

import (
	"context"
	"errors"
	"time"
)

// Admission orders.
const (
	OrderPitstop = "pitstop"
	OrderFCFS    = "fcfs"
)

// Rank is a program's rank: the tokens of service it has had (lower goes
// first); 0 for every call under OrderFCFS.
func (r *Router) Rank(program string) float64 {
	if r.cfg.Order == OrderFCFS {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attained[program]
}

// key is a call's place in an admission queue, lowest first: its
// program's rank less the aging credit of its wait. Every waiting call is
// credited at the same rate, so the credit's difference between two calls
// is fixed by when they arrived: rank + Aging·arrival orders them as
// rank − Aging·waited does at any later time. Under OrderFCFS it is the
// arrival time alone.
func (r *Router) key(program string) float64 {
	now := time.Since(r.start).Seconds()
	if r.cfg.Order == OrderFCFS {
		return now
	}
	return r.Rank(program) + max(r.cfg.Aging, 0)*now
}

// Generate runs one generation on a backend chosen for it (pin: the
// backend of the call's earlier round, kept when it is up), waiting in
// that backend's admission queue; emit sees the reply's events as they
// arrive and reports whether the event reached the client (content does;
// a server-side tool call it holds does not). A backend that fails before
// any event reached the client moves the generation to another backend
// (the whole conversation is re-sent; emit first sees EventRestart when
// it had seen events of the failed attempt); one that fails after is an
// *Error of kind ErrBackendFailed, as is one that had run tools of its own
// (moving would run them twice). Errors are *Error values or ctx's error.
// req serves one Generate at a time: it keeps the encoding of the
// conversation sent, for its next generation.
func (r *Router) Generate(ctx context.Context, req *Request, pin string, emit func(Event) bool) (Reply, error) {
	// exclude is req.Exclude and the backends tried so far: a copy is
	// made only when a backend fails (most calls never do).
	exclude := req.Exclude
	copied := false
	tried := func(name string) {
		if !copied {
			copied = true
			m := make(map[string]bool, len(req.Exclude)+1)
			for k := range req.Exclude {
				m[k] = true
			}
			exclude = m
		}
		exclude[name] = true
	}
	var lastErr string
	for {
		b := r.pick(req, exclude, pin)
		if b == nil {
			msg := "no backend is up"
			if lastErr != "" {
				msg += " (last error: " + lastErr + ")"
			}
			return Reply{}, &Error{Kind: ErrNoBackend, Msg: msg, RetryAfter: r.cfg.HealthInterval}
		}
		rep, out, err := r.attempt(ctx, b, req, emit)
		if err == nil {
			return rep, nil
		}
		if ctx.Err() != nil {
			return Reply{}, ctx.Err()
		}
		var f *failure
		if !errors.As(err, &f) {
			tried(b.name) // errBackendGone: queued, then sent away
			continue
		}
		switch {
		case f.rejected:
			return Reply{}, &Error{Kind: ErrRejected, Backend: b.name, Msg: f.msg}
		case !f.down:
			return Reply{}, &Error{Kind: ErrBadReply, Backend: b.name, Msg: f.msg}
		case out.forwarded:
			return Reply{}, &Error{Kind: ErrBackendFailed, Backend: b.name, Msg: f.msg}
		}
		if out.seen {
			emit(Event{Kind: EventRestart})
		}
		lastErr = b.name + ": " + f.msg
		tried(b.name)
		r.m.moved.Inc()
		r.log.Warn("backend failed before any output: moving the call", "backend", b.name, "program", req.Program, "err", f.msg)
	}
}

// delivery is what an attempt's events did: seen (emit saw some) and
// forwarded (one reached the client, or the backend ran tools: the
// generation cannot move).
type delivery struct{ seen, forwarded bool }

// attempt runs a generation on one backend.
func (r *Router) attempt(ctx context.Context, b *Backend, req *Request, emit func(Event) bool) (Reply, delivery, error) {
	rank := r.key(req.Program)
	est := req.PromptTokens + req.PredictedDecode
	b.work.Add(int64(est))
	defer b.work.Add(-int64(est))
	b.met.queue.Inc()
	err := b.adm.acquire(ctx, rank)
	b.met.queue.Dec()
	if err != nil {
		return Reply{}, delivery{}, err
	}
	b.met.inflight.Inc()
	start := time.Now()
	var first time.Time
	var out delivery
	var held []Event
	if req.Buffered {
		// Room for a short reply's events (most are two or three): one
		// allocation, where append would grow the slice two or three times.
		held = make([]Event, 0, 4)
	}
	slot := -1
	if b.slots != nil {
		var restore string
		slot, restore = b.slots.assign(req.Program)
		if restore != "" {
			if err := b.slotAction(ctx, slot, "restore", restore); err != nil {
				r.log.Warn("llama.cpp slot restore failed: the turn recomputes its context", "backend", b.name, "slot", slot, "err", err)
			}
		}
	}
	rep, err := b.send(ctx, req, int(rank), slot, func(e Event) {
		e.Backend = b.name
		if first.IsZero() {
			first = time.Now()
		}
		if e.Kind == EventBackendToolRound {
			out.forwarded = true // its tools ran: never run them again elsewhere
		}
		if req.Buffered {
			held = append(held, e)
			return
		}
		out.seen = true
		if emit(e) {
			out.forwarded = true
		}
	})
	if err == nil {
		for _, e := range held {
			emit(e)
		}
	}
	d := time.Since(start)
	b.met.inflight.Dec()
	if !first.IsZero() {
		b.adm.observe(first.Sub(start))
		b.met.ttft.Observe(first.Sub(start).Seconds())
	}
	b.adm.release()
	b.booked(d, rep.Usage, err != nil)
	if err != nil {
		var f *failure
		kind := "cancelled"
		if errors.As(err, &f) {
			switch {
			case f.rejected:
				kind = "rejected"
			case f.down:
				kind = "down"
				if ctx.Err() == nil && b.struck() && b.setUp(false, f.msg) {
					r.log.Warn("backend down", "backend", b.name, "err", f.msg)
					r.m.up.WithLabelValues(b.name).Set(0)
				}
			default:
				kind = "bad_reply"
			}
		}
		if ctx.Err() == nil {
			r.m.errors.WithLabelValues(b.name, kind).Inc()
		}
		b.met.failed.Inc()
		return rep, out, err
	}
	rep.Backend = b.name
	b.met.ok.Inc()
	b.met.latency.Observe(d.Seconds())
	if rep.Usage.CachedTokens >= 0 {
		b.met.promptTokens.Add(float64(rep.Usage.PromptTokens))
		b.met.cachedTokens.Add(float64(rep.Usage.CachedTokens))
	}
	r.mu.Lock()
	miss := rep.Usage.PromptTokens - max(rep.Usage.CachedTokens, 0)
	if rep.Usage.PromptTokens == 0 {
		miss = req.PromptTokens
	}
	r.attained[req.Program] += float64(miss + rep.Usage.CompletionTokens)
	r.usedLocked(req.Program, time.Now())
	if h := r.holds[b.name]; h != nil {
		h.Hold(req.Program, max(rep.Usage.PromptTokens, req.PromptTokens)+rep.Usage.CompletionTokens, time.Since(r.start))
	}
	r.mu.Unlock()
	return rep, out, nil
}
