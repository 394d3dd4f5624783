package policy

import (
	"container/heap"
	"math"
	"slices"

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
// The engine is a batch server: under arrival order a call starts when one
// of the calls ahead of it leaves the batch, not when all of them finished.
// So the shadow is a queue of c servers (M/G/c, first come first served): a
// call takes the server that frees first, no earlier than its arrival, and
// holds it for its predicted device time (prefill chunks and decode
// iterations; its tool time frees the slot, as arrival order's engines
// discard or swap at a tool). c is learned from the engine: its batch size
// in the iterations where runnable calls were left out (the batch was
// full), a weighted mean over about the last 1,000 such iterations; until
// one is seen, as many as there are calls. The call's deadline is its shadow
// start plus slack times its predicted own time (device time and tool
// time). Exact for an engine bound by its batch slots with true
// predictions (TestFCFSShadowMatchesFCFS); where memory bounds the batch,
// c is the batch the policy in use achieves, which is measured, not
// derived.
type fcfsShadow struct {
	free freeTimes // when each server frees, seconds
	c    float64   // learned servers: the full batch's size, weighted mean
	full bool      // a full batch was seen
	// e2e keeps the shadow end-to-end times of the last fcfsWindow calls
	// and p99 their 99th percentile, refreshed every fcfsEvery calls:
	// arrival order's p99 as the shadow measures it, its wait distribution
	// included (fcfsReference's T has the mean wait alone).
	e2e, sorted []float64
	n           int
	p99         float64
}

// record adds a call's shadow end-to-end time (seconds).
func (f *fcfsShadow) record(e2e float64) {
	if len(f.e2e) < fcfsWindow {
		f.e2e = append(f.e2e, e2e)
	} else {
		f.e2e[f.n%fcfsWindow] = e2e
	}
	f.n++
	if f.n%fcfsEvery == 0 || f.n == fcfsMinCalls {
		f.sorted = append(f.sorted[:0], f.e2e...)
		slices.Sort(f.sorted)
		f.p99 = f.sorted[(len(f.sorted)*99)/100]
	}
}

// tail is arrival order's p99 end-to-end time in the shadow, and whether
// enough calls entered it to know it.
func (f *fcfsShadow) tail() (float64, bool) { return f.p99, f.n >= fcfsMinCalls }

// shadowAlpha weighs one full-batch iteration in c: about the last 1,000.
const shadowAlpha = 0.001

// observe learns c from an iteration.
func (f *fcfsShadow) observe(e *engine.Event) {
	if e.Kind != engine.EvIteration || e.Iter == nil || e.Iter.Seqs == 0 || e.Iter.Waiting == 0 {
		return
	}
	if !f.full {
		f.c, f.full = float64(e.Iter.Seqs), true
		return
	}
	f.c += shadowAlpha * (float64(e.Iter.Seqs) - f.c)
}

// servers is the number of shadow servers once a full batch was seen.
func (f *fcfsShadow) servers() int { return max(int(math.Round(f.c)), 1) }

// enter places a call arriving at a (seconds) that holds a server for dev
// seconds, and returns its shadow start. Until a full batch is seen no call
// has waited, and none does in the shadow: the heap then holds the calls
// still on their servers.
func (f *fcfsShadow) enter(a, dev float64) float64 {
	dev = max(dev, 0)
	if !f.full {
		for f.free.Len() > 0 && f.free[0] <= a {
			heap.Pop(&f.free)
		}
		heap.Push(&f.free, a+dev)
		return a
	}
	c := f.servers()
	for f.free.Len() < c {
		heap.Push(&f.free, a) // a new server, free since the call's arrival
	}
	for f.free.Len() > c {
		heap.Pop(&f.free) // the one that frees first: the backlog stays
	}
	start := max(a, f.free[0])
	f.free[0] = start + dev
	heap.Fix(&f.free, 0)
	return start
}

// freeTimes is a min-heap of server free times.
type freeTimes []float64

func (h freeTimes) Len() int           { return len(h) }
func (h freeTimes) Less(i, j int) bool { return h[i] < h[j] }
func (h freeTimes) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *freeTimes) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *freeTimes) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// restParts splits restOfService into the device part (prefill chunks and
// decode iterations) and the predicted time of the tool ahead.
func restParts(v *engine.View, s *engine.Sequence, st *callState) (dev, tool float64) {
	t := restOfService(v, s, st)
	if pr := s.Forecast().Predicted; pr.HasTool {
		tool = max(pr.ToolTime, 0)
	}
	return t - tool, tool
}
