package policy

import (
	"container/heap"
	"math"

	"github.com/pitstop-llm/pitstop/engine"
)

// fcfsShadow replays arrival order online, beside whatever order the engine
// runs, to give each call the time it would start and finish under
// first-come-first-served: its arrival-order deadline. One learned number
// for all calls (fcfsReference's T) is a mean wait plus a p99 own time, too
// low where waits vary and too high where they do not; the shadow gives each
// call its own wait, the one the work ahead of it at its arrival would have
// cost it.
//
// The engine is a batch server: under arrival order a call starts when the
// calls ahead of it have left it room, not when all of them finished. Room
// is two things, and the shadow keeps both: batch slots and KV memory. A
// call starts no earlier than its arrival and the start of the call before
// it (arrival order admits in order: the head of the line blocks), once
// fewer than c shadow calls run and its mean context (prompt and half its
// predicted output: meanContext) fits in the device's KV beside theirs; it
// then prefills behind the calls ahead of it (the token budget is a third
// resource: one server in arrival order), decodes one token per mean
// iteration of the engine, and frees both (a tool frees them too: arrival
// order's engines discard or swap at a tool; enter). Its predicted own time
// is scaled by the ratio of the observed own times of the calls that
// finished to the shadow's predictions of them (a replay of the observed
// service: finishedCall). The memory is the View's; c is learned from the
// engine: its largest batch in the iterations where runnable calls were
// left out (observe), and unbounded until one is seen. Close to a real fcfs
// run of the engine with true predictions, bound by slots or by memory
// (TestFCFSShadowMatchesFCFS, with the tolerances it states). On the
// simulated profiles it is below arrival order's real p99 (measured in
// docs/results-policies.md, session 9): what it does not model (swaps,
// recompute, tools holding memory) only adds time.
type fcfsShadow struct {
	running   shadowCalls // the shadow calls on the device, by when they end
	used      float64     // their mean contexts, tokens
	lastStart float64     // the last shadow start, seconds
	c         float64     // learned slots: the largest full batch
	full      bool        // a full batch was seen
	prefilled float64     // when the shadow's prefill server is done with the calls entered, seconds
	iter      float64     // the engine's mean iteration time, seconds (weighted mean; 0: none yet)
	// obs and pred are decayed sums of the finished calls' own times
	// (end-to-end less waits) and of the shadow's predictions of them:
	// their ratio scales the next predictions (scale).
	obs, pred float64
	finished  int
	// The shadow end-to-end times of the last fcfsWindow calls and their
	// 99th percentile: arrival order's p99 as the shadow measures it, its
	// wait distribution included (fcfsReference's T has the mean wait alone).
	p99Window
	// keepQueue scales the service alone, not the wait in the prefill
	// queue (PitstopTail "...-queue"; enterKeepingQueue).
	keepQueue bool
	// cached prices a call's prefill less its prefix-cached tokens
	// (PitstopTail "...-cached"; fcfsShadow.workOf).
	cached bool
	// lastOwn is the own time of the call entered last that the scale
	// learns from (the caller keeps it as the call's shadowOwn).
	lastOwn float64
}

// observe learns c from an iteration: the most calls a batch held while
// runnable calls were left out. A slot limit is reached exactly; where
// memory binds first the largest batch it allowed is an upper bound, and
// the shadow's memory does the rest.
//
// It also learns the mean iteration time, the time a decode token costs a
// call in the batches the engine actually runs (prefill chunks included),
// over about the last 100 iterations.
func (f *fcfsShadow) observe(e *engine.Event) {
	if e.Kind == engine.EvFinished {
		f.finishedCall(e)
		return
	}
	if e.Kind != engine.EvIteration || e.Iter == nil || e.Iter.Seqs == 0 {
		return
	}
	d := e.Iter.Duration.Seconds()
	if f.iter == 0 {
		f.iter = d
	}
	f.iter += shadowIterAlpha * (d - f.iter)
	if e.Iter.Waiting > 0 {
		f.c, f.full = max(f.c, float64(e.Iter.Seqs)), true
	}
}

// shadowIterAlpha weighs an iteration in the mean iteration time.
const shadowIterAlpha = 0.01

// finishedCall replays the observed own time of a finished call against
// the shadow's prediction of it: predictions miss what the forecast does
// not hold (the tools after the next one, their returns, the batches'
// real iteration times), and the ratio over about the last 20 calls
// (fcfsAlpha) corrects the next ones.
func (f *fcfsShadow) finishedCall(e *engine.Event) {
	st := stateOf(e.Seq)
	if e.Seq.Cancelled() || e.Err != nil || st.shadowOwn <= 0 {
		return
	}
	own := (e.Seq.FinishedAt() - e.Seq.Arrival() - e.Seq.Waited()).Seconds()
	f.obs += fcfsAlpha * (max(own, 0) - f.obs)
	f.pred += fcfsAlpha * (st.shadowOwn - f.pred)
	f.finished++
}

// scale is the observed over the predicted own time, 1 until fcfsMinCalls
// calls finished.
func (f *fcfsShadow) scale() float64 {
	if f.finished < fcfsMinCalls || f.pred <= 0 || f.obs <= 0 {
		return 1
	}
	return f.obs / f.pred
}

// shadowWork is what a call asks of the engine: prefill tokens, decode
// tokens (one iteration each) and tool time, seconds.
type shadowWork struct {
	prefill, decode int
	tool            float64
}

// workOf is the call's predicted work to its end: its uncomputed context
// and the tool's return as prefill, its output to the end of the call as
// decode, the tool ahead's predicted time.
func workOf(s *engine.Sequence, st *callState) shadowWork {
	pr := s.Forecast().Predicted
	w := shadowWork{prefill: max(s.NumTokens()-s.Computed(), 0), decode: decodeLeft(pr, s, st)}
	if pr.HasTool {
		w.prefill += max(pr.ToolReturn, 0)
		w.decode += max(pr.After, 0)
		w.tool = max(pr.ToolTime, 0)
	}
	return w
}

// servers is the number of shadow slots: unbounded (MaxInt) until a full
// batch is seen.
func (f *fcfsShadow) servers() int {
	if !f.full {
		return math.MaxInt
	}
	return max(int(math.Round(f.c)), 1)
}

// enter places a call arriving at a (seconds) that asks w of the engine
// and holds mem tokens of KV on average, on a device of v's KV, and returns
// its shadow start and end. Admitted (see fcfsShadow), its prefill waits
// for the prefill of the calls ahead of it: the token budget is one server
// shared in arrival order (chunked prefill), at the budget left beside the
// running decodes per iteration of a full budget (v.Cost). Then it decodes
// one token per mean iteration, and its tool takes its predicted time.
func (f *fcfsShadow) enter(v *engine.View, a float64, w shadowWork, mem float64) (start, end float64) {
	t := max(a, f.lastStart)
	f.release(t)
	c, capacity := f.servers(), kvCapacity(v)
	for f.running.Len() > 0 && (f.running.Len() >= c || f.used+mem > capacity) {
		t = max(t, f.running[0].end) // wait for the next shadow call to end
		f.release(t)
	}
	iter := f.iter
	if iter <= 0 {
		iter = v.Cost.IterTime(v.Running + 1)
	}
	k := f.scale()
	if f.keepQueue {
		end = f.enterKeepingQueue(v, t, w, k, iter)
	} else {
		f.prefilled = max(t, f.prefilled) + float64(w.prefill)/prefillRate(v)
		end = t + k*(f.prefilled-t+float64(w.decode)*iter)
		f.lastOwn = end + k*w.tool - t
	}
	heap.Push(&f.running, shadowCall{end: end, mem: mem})
	f.used += mem
	f.lastStart = t
	return t, end + k*w.tool
}

// prefillRate is the engine's prefill tokens per second with the token
// budget full: the budget less the running decodes (at most half of it),
// per iteration of the full budget.
func prefillRate(v *engine.View) float64 {
	b := v.Cost.TokenBudget
	it := v.Cost.IterTime(b)
	if b <= 0 || it <= 0 {
		return math.Inf(1)
	}
	return float64(b-min(v.Running, b/2)) / it
}

// release ends the shadow calls that end by t.
func (f *fcfsShadow) release(t float64) {
	for f.running.Len() > 0 && f.running[0].end <= t {
		f.used -= heap.Pop(&f.running).(shadowCall).mem
	}
}

// shadowCall is a call on the shadow's device.
type shadowCall struct{ end, mem float64 }

// shadowCalls is a min-heap of shadow calls by end.
type shadowCalls []shadowCall

func (h shadowCalls) Len() int           { return len(h) }
func (h shadowCalls) Less(i, j int) bool { return h[i].end < h[j].end }
func (h shadowCalls) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *shadowCalls) Push(x any)        { *h = append(*h, x.(shadowCall)) }
func (h *shadowCalls) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// tail is arrival order's p99 end-to-end time in the shadow, and whether
// enough calls entered it to know it.
func (f *fcfsShadow) tail() (float64, bool) { return f.p99() }

// restParts splits restOfService into the device part (prefill chunks and
// decode iterations) and the predicted time of the tool ahead.
func restParts(v *engine.View, s *engine.Sequence, st *callState) (dev, tool float64) {
	t := restOfService(v, s, st)
	if pr := s.Forecast().Predicted; pr.HasTool {
		tool = max(pr.ToolTime, 0)
	}
	return t - tool, tool
}

// meanContext is the call's predicted mean context in tokens over the rest
// of its run: its tokens now and half its predicted output to the end of
// the call (the tool's return with the output after it): memory-over-time
// over time, the memory arrival order's engines hold for it on average
// (they admit on the prompt and recompute when decoding runs short, so a
// call does not hold its peak from the start).
func meanContext(s *engine.Sequence, st *callState) float64 {
	pr := s.Forecast().Predicted
	out := decodeLeft(pr, s, st)
	if pr.HasTool {
		out += max(pr.After, 0) + max(pr.ToolReturn, 0)
	}
	return float64(s.NumTokens()) + float64(out)/2
}

// kvCapacity is the device's KV in tokens (unbounded in a View without it).
func kvCapacity(v *engine.View) float64 {
	if c := v.TotalBlocks * v.BlockSize; c > 0 {
		return float64(c)
	}
	return math.Inf(1)
}
