package runtime

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/models/chat"
)

// DefaultClientToolTTL is how long a sequence waits for the program's next
// call after returning tool calls to the client.
const DefaultClientToolTTL = time.Minute

// parkEntry is a sequence paused across the client's tool calls: the call
// that returned the tool calls is over, the sequence (and whatever the
// policy keeps of its KV: preserved, swapped or discarded) waits for the
// program's next call on the same thread. That call resumes it when its
// prompt extends the sequence's text: only the new part (the tool results)
// is appended, as for a server-side tool. Otherwise, or after the TTL, the
// sequence is ended (the prefix cache may still hold its blocks).
type parkEntry struct {
	key      string
	st       *seqCtl // engine goroutine: the entry is live while st.park == entry
	text     string  // the sequence's context as text; immutable
	since    time.Time
	expected float64 // the gap's predicted duration, seconds
	tool     string
	salt     uint64 // the sequence's prefix-cache namespace: a call of another resumes nothing
}

func parkKey(program, thread string) string { return program + "\x00" + thread }

// park completes the call of a sequence that paused at client tool calls and
// keeps the sequence for the program's next call (engine goroutine, from the
// EvPaused event).
func (rt *Runtime) park(s *seqCtl, expected float64) {
	now := time.Now()
	s.timing.Finished = now
	res := s.result()
	tool := ""
	if len(res.ToolCalls) > 0 {
		tool = res.ToolCalls[0].Name
	}
	s.endSegment(tool, nil, 0)
	if rt.trace != nil {
		recs := s.segments
		go rt.trace.write(recs)
	}
	e := &parkEntry{key: parkKey(s.call.key, s.thread), st: s, text: rt.tok.Decode(s.seq.Tokens()),
		since: now, expected: expected, tool: tool, salt: s.seq.CacheSalt()}
	s.park = e
	s.handedOff = true
	rt.parkMu.Lock()
	old := rt.parked[e.key]
	rt.parked[e.key] = e
	rt.parkMu.Unlock()
	if old != nil {
		// Engine calls wait for the next iteration: not from an observer.
		rt.eng.Post(func() { rt.dropParked(old, "replaced") })
	}
	rt.eng.At(rt.clock.Now()+rt.cfg.ClientToolTTL, func() { rt.dropParked(e, "expired") })
	rt.metrics.parks.WithLabelValues("parked").Inc()
	s.call.complete(res)
}

// unpark removes an entry from the table (engine goroutine).
func (rt *Runtime) unpark(e *parkEntry) {
	if e.st.park == e {
		e.st.park = nil
	}
	rt.parkMu.Lock()
	if rt.parked[e.key] == e {
		delete(rt.parked, e.key)
	}
	rt.parkMu.Unlock()
}

// dropParked ends a parked sequence that is still parked (engine goroutine).
func (rt *Runtime) dropParked(e *parkEntry, why string) {
	if e.st.park != e {
		return // resumed, or already gone
	}
	rt.unpark(e)
	rt.metrics.parks.WithLabelValues(why).Inc()
	rt.eng.Cancel(e.st.seq.ID())
}

// parkedFor finds the parked sequence of a program's thread and, when the
// new prompt extends its text, tokenizes the extension (the caller's
// goroutine). It returns the entry that no longer matches, to be dropped.
func (rt *Runtime) parkedFor(program, thread string, salt uint64, prompt chat.Rendered) (match *parkEntry, rest []int32, stale *parkEntry) {
	rt.parkMu.Lock()
	e := rt.parked[parkKey(program, thread)]
	rt.parkMu.Unlock()
	if e == nil {
		return nil, nil, nil
	}
	if e.salt != salt || len(prompt.Text) <= len(e.text) || !strings.HasPrefix(prompt.Text, e.text) {
		return nil, nil, e
	}
	// The extension (the tool results and anything the client added),
	// with the template's spans of conversation text in it.
	rest, err := prompt.Slice(len(e.text), len(prompt.Text)).Encode(rt.tok)
	if err != nil { // spans from the template are in order and in bounds
		return nil, nil, e
	}
	return e, rest, nil
}

// resumeParked hands a parked sequence to the new call st and appends the
// extension of its prompt (engine goroutine). It reports false when the
// entry is no longer parked.
func (rt *Runtime) resumeParked(e *parkEntry, st *seqCtl, rest []int32) bool {
	old := e.st
	if old.park != e || old.done || old.seq.State() != engine.Paused {
		return false
	}
	rt.unpark(e)
	seq := old.seq
	st.seq, st.ref = seq, old.ref
	old.ref.cur = st
	st.promptTokens = seq.NumTokens() + len(rest)
	st.segPrompt = st.promptTokens
	st.call.st = st
	rt.live[seq.ID()] = st
	if err := rt.eng.ResumeWith(seq.ID(), rest, st.sampling); err != nil { // cannot happen: it is paused
		rt.log.Error("resuming a parked sequence", "call", st.call.id, "err", err)
		st.failure = errorf(ErrInternal, "", "internal_error", "resuming the program's paused call: %v", err)
		rt.eng.Cancel(seq.ID())
		return true
	}
	gap := time.Since(e.since).Seconds()
	rt.metrics.parks.WithLabelValues("resumed").Inc()
	key := clientToolKey(e.st.call.tenant, e.tool)
	rt.metrics.predErr.WithLabelValues(key).Observe(math.Abs(e.expected - gap))
	if gap > 0 {
		rt.metrics.predRelErr.WithLabelValues(key).Observe(math.Abs(e.expected-gap) / gap)
	}
	return true
}

// ReleaseParked ends every sequence parked across a client's tool calls
// (their KV is freed; the programs' next calls start afresh, helped by the
// prefix cache).
func (rt *Runtime) ReleaseParked(ctx context.Context) error {
	return rt.onEngine(ctx, func() {
		rt.parkMu.Lock()
		list := make([]*parkEntry, 0, len(rt.parked))
		for _, e := range rt.parked {
			list = append(list, e)
		}
		rt.parkMu.Unlock()
		for _, e := range list {
			rt.dropParked(e, "released")
		}
	})
}
