package engine

// Queuer is implemented by policies that keep calls in numbered queues
// (mlfq, plas, atlas, pitstop's attained-service queues): the queue a
// runnable call waits in, 0 the first; -1 for a call promoted ahead of the
// queues (anti-starvation). It is read for metrics only.
type Queuer interface {
	Queue(s *Sequence) int
}

// QueueLengths counts the runnable calls that are not running, by the
// policy's queue (all in queue 0 when the policy has none). It walks every
// live call: call it for metrics, not per iteration. Engine goroutine.
func (e *Engine) QueueLengths() map[int]int {
	q, _ := e.policy.(Queuer)
	out := map[int]int{}
	for _, s := range e.seqs {
		if !s.Runnable() || s.state == Running {
			continue
		}
		i := 0
		if q != nil {
			i = q.Queue(s)
		}
		out[i]++
	}
	return out
}
