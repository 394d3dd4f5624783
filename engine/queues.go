package engine

// Queuer gives the numbered queue a runnable call waits in, for policies
// that keep calls in queues (mlfq, plas, atlas, pitstop's attained-service
// queues): 0 the first; -1 for a call promoted ahead of the queues
// (anti-starvation). It is read for metrics only. Default: 0 for every call.
type Queuer interface {
	Queue(s *Sequence) int
}

// QueueLengths counts the runnable calls that are not running, by the
// policy's queue. It walks every live call: call it for metrics, not per
// iteration. Engine goroutine.
func (e *Engine) QueueLengths() map[int]int {
	out := map[int]int{}
	for _, s := range e.seqs {
		if !s.Runnable() || s.state == Running {
			continue
		}
		out[e.policy.Queue(s)]++
	}
	return out
}
