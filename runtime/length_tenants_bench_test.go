package runtime

import (
	"fmt"
	"testing"

	"github.com/pitstop-llm/pitstop/predictor"
)

// What a call pays to find its tenant's length state: held in memory, or,
// past the cap, restored from disk while the one it evicts is saved
// (two tenants, room for one: every acquire restores one from disk and
// starts the save of the other, which the timing leaves out). Each state
// has been taught 200 classes of 20 segments.
func BenchmarkTenantStepAcquire(b *testing.B) {
	for _, c := range []struct {
		name string
		held int
	}{{"held", 2}, {"restored", 1}} {
		b.Run(c.name, func(b *testing.B) {
			ts := newTenantSteps(60, predictor.NewServedStep(60), c.held, quietLog())
			if err := ts.persist(b.TempDir()); err != nil {
				b.Fatal(err)
			}
			for _, tenant := range []string{"a", "b"} {
				s := ts.acquire(tenant)
				for k := range 200 {
					feed(s.served(), fmt.Sprintf("prog:c%d", k), 20, 10+k)
				}
				ts.release(s)
			}
			ts.close()
			b.ResetTimer()
			for i := range b.N {
				ts.release(ts.acquire([]string{"a", "b"}[i%2]))
				if c.held == 1 {
					b.StopTimer()
					ts.saves.Wait() // the evicted state on disk: the next acquire reads it
					b.StartTimer()
				}
			}
			b.StopTimer()
			ts.close()
		})
	}
}
