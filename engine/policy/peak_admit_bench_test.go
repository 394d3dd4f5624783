package policy

import (
	"fmt"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// preserveAll is pitstop with every paused call preserved: the scene of the
// admission benchmark wants the device full of preserved calls whatever
// the handling model would choose.
type preserveAll struct{ *Pitstop }

func (preserveAll) Handle(*engine.View, *engine.Sequence) handling.Kind { return handling.Preserve }

// admitScene is an engine with 256 calls preserved on the device (16 blocks
// each, their tools predicted to take tool seconds) and waiting calls of
// 64 prompt tokens whose predicted output, 2,048 tokens, does not fit in
// the free blocks: the peak rule walks the preserved calls for room.
func admitScene(b *testing.B, p *Pitstop, tool float64, waiting int) (*engine.View, []*engine.Sequence) {
	const preserved = 256
	cfg := engine.Config{NumBlocks: preserved*16 + 64, BlockSize: 16, HostBlocks: 1 << 16,
		MaxBatchedTokens: 512, MaxSeqs: 256, Cost: testCost()}
	h := newHarness(b, preserveAll{p}, cfg)
	for i := range preserved {
		// 240 prompt tokens and 16 decoded: 16 blocks at the pause.
		h.submit(fmt.Sprint("P", i), fmt.Sprint("pp", i), "main", 240,
			[]seg{{decode: 16, tool: 1e6, ret: 1}, {decode: 1}}, []seg{{decode: 16, tool: tool, ret: 1}, {decode: 1}})
	}
	paused := 0
	h.run(func(ev *engine.Event) bool {
		if ev.Kind == engine.EvPaused {
			paused++
		}
		return paused == preserved
	})
	for name, ks := range h.paused {
		if len(ks) != 1 || ks[0] != handling.Preserve {
			b.Fatalf("%s handled %v, want preserve (the scene is wrong)", name, ks)
		}
	}
	seqs := make([]*engine.Sequence, waiting)
	for i := range seqs {
		seqs[i] = h.submit(fmt.Sprint("W", i), fmt.Sprint("pw", i%1000), "main", 64, []seg{{decode: 2048}}, nil)
	}
	vv := h.e.View()
	v := &vv
	n := 0
	for range v.PausedOnDevice() {
		n++
	}
	if n != preserved || v.FreeNow()-v.Watermark() >= (64+2048)/16 {
		b.Fatalf("%d calls preserved on the device, %d blocks free: the scene wants %d preserved and a peak that does not fit", n, v.FreeNow()-v.Watermark(), preserved)
	}
	return v, seqs
}

// BenchmarkPeakAdmit is the admission part of one engine iteration per op
// (what fillBatch asks): Admit for each waiting call in turn, stopping when
// the token budget (512) is spent or, as fillBatch does since session 13,
// at a refusal that holds back the rest (Shape's RefusalHolds), with 100,
// 1,000 and 10,000 waiting calls and 256 calls preserved on the device.
// "late": the preserved calls' tools return after a waiting call would
// reach its peak, so their blocks are room and each admission walks them
// until its peak fits (8 admitted per op); "early": they return first, and
// the first call is refused after walking all 256 (before session 13 the
// rest were asked too, each one held check). host room "admit" (no peak
// rule) is the comparison.
func BenchmarkPeakAdmit(b *testing.B) {
	for _, mode := range []string{"peak", "admit"} {
		for _, sc := range []struct {
			name string
			tool float64
		}{{"late", 1e6}, {"early", 0.001}} {
			for _, w := range []int{100, 1000, 10000} {
				b.Run(fmt.Sprintf("%s/%s/waiting=%d", mode, sc.name, w), func(b *testing.B) {
					p := NewPitstop(Options{PitstopHostRoom: mode, NoDynamicHandling: true})
					v, seqs := admitScene(b, p, sc.tool, w)
					admitted := 0
					b.ResetTimer()
					for range b.N {
						v.Iteration++
						holds := p.Shape(v).RefusalHolds
						budget := 512
						for _, s := range seqs {
							if budget <= 0 {
								break
							}
							if !p.Admit(v, s, budget) {
								if holds {
									break
								}
								continue
							}
							admitted++
							budget -= min(s.Remaining(), budget)
						}
					}
					b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
				})
			}
		}
	}
}

// peakStepper keeps 64 short calls running (each replaced by a new one when
// it finishes) in front of waiting calls whose predicted output never fits:
// every iteration the first of those is refused by the peak rule and holds
// back the rest.
type peakStepper struct {
	b    *testing.B
	e    *engine.Engine
	next int
}

// huge predicts an output far past the device's blocks; it never runs.
type huge struct{}

func (huge) Next(*engine.Sequence, int32) engine.Action { return engine.Action{Token: 1} }
func (huge) Forecast(*engine.Sequence) engine.Forecast {
	p := engine.Prediction{Decode: 1 << 22}
	return engine.Forecast{Predicted: p, Truth: p, HasTruth: true}
}

func (r *peakStepper) submit(ctl engine.Controller) {
	r.next++
	prompt := make([]int32, 64)
	for i := range prompt {
		prompt[i] = int32(r.next*64 + i + 1)
	}
	if _, err := r.e.SubmitNow(engine.Request{Prompt: prompt, Program: fmt.Sprint("p", r.next), Thread: "main", Controller: ctl}); err != nil {
		r.b.Fatal(err)
	}
}

func (r *peakStepper) Observe(ev *engine.Event) {
	if ev.Kind == engine.EvFinished {
		r.e.At(ev.Time, func() { r.submit(endless{}) })
	}
}

// BenchmarkPeakAdmitStep is one whole engine iteration per op (ranking,
// batch building with the engine's own walk of the run queue,
// postprocessing) under pitstop's defaults, with 64 short calls running and
// 100, 1,000 or 10,000 waiting calls refused by the peak rule: the cost of
// a refusal at the head of a long queue as the engine pays it.
func BenchmarkPeakAdmitStep(b *testing.B) {
	for _, w := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("waiting=%d", w), func(b *testing.B) {
			p := NewPitstop(Options{})
			cfg := engine.Config{NumBlocks: 1 << 14, BlockSize: 16, HostBlocks: 1 << 16,
				MaxBatchedTokens: 512, MaxSeqs: 256, Cost: testCost()}
			r := &peakStepper{b: b}
			e, err := engine.New(cfg, engine.NewVirtualClock(), zeroExec{}, p, r)
			if err != nil {
				b.Fatal(err)
			}
			r.e = e
			for range 64 {
				r.submit(endless{})
			}
			for range w {
				r.submit(huge{})
			}
			step := func() {
				if _, ok, err := e.StepOnce(); err != nil || !ok {
					b.Fatalf("step: ok %v, %v", ok, err)
				}
			}
			for range 600 { // the first calls finish and are replaced
				step()
			}
			refused := 0
			b.ResetTimer()
			for range b.N {
				step()
				if p.room.held == e.Iterations() {
					refused++
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
			// Calls that finished in the last step are replaced at the next.
			if l := e.Load(); l.Running == 0 || l.Running > 64 || l.Waiting != w {
				b.Fatalf("%d running and %d waiting, want up to 64 and %d (the scene is wrong)", l.Running, l.Waiting, w)
			}
		})
	}
}
