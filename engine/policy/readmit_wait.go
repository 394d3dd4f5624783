package policy

import (
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// readmitWait learns how long a call whose KV left the device waits, once
// its tool returned, before it runs again (an exponentially weighted mean
// over such calls, in seconds). Blocks freed into the prefix cache must
// survive the tool and this wait to be reused; under load the wait is what
// evicts them.
type readmitWait struct {
	mean    float64
	pending map[*engine.Sequence]time.Duration // resumed without KV on the device, not run since
}

// readmitAlpha weighs a new sample: about the last 20 readmissions count.
const readmitAlpha = 0.05

func (r *readmitWait) observe(e *engine.Event) {
	switch e.Kind {
	case engine.EvResumed:
		if e.Seq.State() != engine.Running {
			if r.pending == nil {
				r.pending = map[*engine.Sequence]time.Duration{}
			}
			r.pending[e.Seq] = e.Time
		}
	case engine.EvToken:
		if t, ok := r.pending[e.Seq]; ok {
			delete(r.pending, e.Seq)
			r.mean += readmitAlpha * ((e.Time - t).Seconds() - r.mean)
		}
	case engine.EvFinished:
		delete(r.pending, e.Seq)
	}
}
