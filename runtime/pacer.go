package runtime

import (
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// notePrefills notes, for each call's first prefill in the batch, how many
// prompt tokens the prefix cache supplied (the batch item's start).
func notePrefills(b *engine.Batch) {
	for i := range b.Items {
		it := &b.Items[i]
		if r, ok := it.Seq.Controller().(*seqRef); ok && !r.cur.prefilled {
			r.cur.prefilled = true
			r.cur.cachedAtStart = it.Start
		}
	}
}

// pacedExecutor runs the simulated executor on the real clock: each
// iteration sleeps the simulated GPU time (times Pace), so the engine serves
// at the speed the profiled device would. It returns the wall time the
// iteration took, as a real executor would.
type pacedExecutor struct {
	sim  *sim.Executor
	pace float64
}

func (p *pacedExecutor) Step(b *engine.Batch) (time.Duration, error) {
	start := time.Now()
	notePrefills(b)
	d, err := p.sim.Step(b)
	if err != nil {
		return 0, err
	}
	if p.pace > 0 {
		time.Sleep(time.Duration(float64(d) * p.pace))
	}
	return max(time.Since(start), time.Nanosecond), nil
}

// realExecutor wraps an executor that does the work itself (models/cpu).
type realExecutor struct{ x engine.Executor }

func (r realExecutor) Step(b *engine.Batch) (time.Duration, error) {
	notePrefills(b)
	d, err := r.x.Step(b)
	return max(d, time.Nanosecond), err
}
