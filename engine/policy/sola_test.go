package policy

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// solaScene: "long" has decoded ~40 tokens at 10 ms each, "young" has just
// generated its first token, "pre" waits for its prefill.
func solaScene(t *testing.T, p *SOLA) (h *harness, now time.Duration) {
	t.Helper()
	h = newHarness(t, p, testConfig())
	h.submit("long", "a", "main", 8, []seg{{decode: 200}}, nil)
	h.run(untilIteration(40))
	h.submit("young", "b", "main", 8, []seg{{decode: 200}}, nil)
	h.run(untilIteration(1))
	h.submit("pre", "c", "main", 8, []seg{{decode: 3}}, nil)
	if h.seqs["young"].Generated() != 1 || h.seqs["long"].Generated() < 30 || h.seqs["pre"].Generated() != 0 {
		t.Fatalf("scene: young %d, long %d, pre %d tokens", h.seqs["young"].Generated(), h.seqs["long"].Generated(), h.seqs["pre"].Generated())
	}
	return h, h.e.Now()
}

// TestSOLAEq1: in TTFT mode a decode that an all-prefill iteration would push
// past T^TPOT (Eq. 1: t + C^p/l_out > T^TPOT while t ≤ T^TPOT) goes ahead
// of the prefills; a decode with slack, or already past its SLO, goes after
// them. In TPOT mode every decode goes first.
func TestSOLAEq1(t *testing.T) {
	// C^p of a full 32-token iteration is 9.93 ms. 5 ms after young's first
	// token: young t = 5 ms, + 9.93/1 > 12 ms; long t ≈ 10 ms, + 9.93/40 < 12 ms.
	p := NewSOLA(Options{TTFTSLO: 10, TPOTSLO: 0.012})
	h, now := solaScene(t, p)
	v := h.view(now+5*time.Millisecond, 50)
	p.ttftMode = true
	if got := order(p, v, h.seqs["long"], h.seqs["pre"], h.seqs["young"]); !slices.Equal(got, []string{"young", "pre", "long"}) {
		t.Fatalf("TTFT mode order %v, want young (at risk), pre, long (slack)", got)
	}
	// 30 ms later young is past its SLO (35 ms for one token): lost, no
	// longer protected.
	v.Now = now + 35*time.Millisecond
	if got := order(p, v, h.seqs["long"], h.seqs["pre"], h.seqs["young"]); got[0] != "pre" {
		t.Fatalf("TTFT mode order %v, want pre first (young lost, long with slack)", got)
	}
	p.ttftMode = false
	v.Now = now + 5*time.Millisecond
	if got := order(p, v, h.seqs["pre"], h.seqs["long"], h.seqs["young"]); got[2] != "pre" {
		t.Fatalf("TPOT mode order %v, want the decodes first", got)
	}
}

// TestSOLALoosening: when both p^TTFT and p^TPOT exceed 1, they are taken at
// the a%-level, a% being the share of calls within their SLO, so a lost
// decode no longer decides the mode (SOLA §4.4.1).
func TestSOLALoosening(t *testing.T) {
	p := NewSOLA(Options{TTFTSLO: 1, TPOTSLO: 0.5, SOLAWindow: 1})
	_, now := solaScene(t, p)
	// 10 s on: pre waited ~10 s (ratio ~10), long's TPOT ~0.26 s (0.52),
	// young's 10 s (20). Plain maxima: 10 < 20, TPOT mode. a = 1/3 (long
	// only): p^TTFT = 10, p^TPOT = 0.52: TTFT mode.
	p.update(now + 10*time.Second)
	ttft, tpot, level := p.Ratios()
	if math.Abs(level-1.0/3) > 1e-9 || tpot > 1 || ttft < 9 {
		t.Fatalf("ratios %g/%g at level %g, want ~10 / ~0.52 at 1/3", ttft, tpot, level)
	}
	if !p.TTFTMode() {
		t.Fatal("lost decode still decides: not in TTFT mode")
	}
	// Within the SLOs: plain maxima.
	p.update(now + 5*time.Millisecond)
	if _, _, level := p.Ratios(); level != 1 {
		t.Fatalf("level %g without misses, want 1", level)
	}
}

func TestSOLALevel(t *testing.T) {
	xs := []float64{0.2, 0.5, 0.9, 1, 3, 7}
	if n := solaWithin(xs); n != 4 {
		t.Errorf("within = %d, want 4", n)
	}
	for _, c := range []struct{ a, want float64 }{{1, 7}, {0.5, 0.9}, {4.0 / 6, 1}, {0, 0.2}, {0.01, 0.2}} {
		if got := solaLevel(xs, c.a); got != c.want {
			t.Errorf("level %g = %g, want %g", c.a, got, c.want)
		}
	}
	if solaLevel(nil, 0.5) != 0 || solaMax(nil) != 0 {
		t.Error("empty sets must give 0")
	}
}

// TestSOLASingleRequestLatency measures what SOLA's SLOs are defined from
// (§6.1: tight = 10x, loose = 15x the single-request latency for 7B–14B
// models): every request of a trace run alone (1000 s apart, fcfs, no
// prefix cache), mean TTFT and TPOT. On demand:
// PITSTOP_SOLA_SINGLE=azure-conv,mooncake-conv go test ./engine/policy -run
// TestSOLASingleRequestLatency -v (profile: PITSTOP_SOLA_PROFILE, default
// a100-80g-llama3-8b).
func TestSOLASingleRequestLatency(t *testing.T) {
	names := os.Getenv("PITSTOP_SOLA_SINGLE")
	if names == "" {
		t.Skip("set PITSTOP_SOLA_SINGLE to a comma-separated list of workloads")
	}
	prof, err := sim.LoadProfile(envOr("PITSTOP_SOLA_PROFILE", "a100-80g-llama3-8b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(names, ",") {
		w, err := workload.Load(name, 1)
		if err != nil {
			t.Fatal(err)
		}
		w.Timestamped = true
		for i := range w.Programs {
			w.Programs[i].Arrival = float64(i) * 1000
		}
		cfg := engine.Config{NumBlocks: prof.NumBlocks(), BlockSize: prof.BlockSize, HostBlocks: prof.HostBlocks(),
			MaxBatchedTokens: prof.MaxBatchedTokens, MaxSeqs: prof.MaxSeqs, SwapBlocksPerIter: prof.Swap.BlocksPerIter,
			Cost: prof.HandlingCost(), HostBlockBytes: prof.BlockBytes()}
		run, err := bench.Run(context.Background(), bench.RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof),
			Policy: FCFS{}, Name: "fcfs", Duration: float64(len(w.Programs)) * 1000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s on %s, %d requests alone: TTFT mean %.4f s (p50 %.4f, p99 %.4f), TPOT mean %.4f s (p99 %.4f); 10x: %.3g / %.3g s, 15x: %.3g / %.3g s",
			name, prof.Name, run.Completed, run.TTFTMeanS, run.TTFTP50S, run.TTFTP99S, run.TPOTMeanS, run.TPOTP99S,
			10*run.TTFTMeanS, 10*run.TPOTMeanS, 15*run.TTFTMeanS, 15*run.TPOTMeanS)
	}
}

// solaProbe wraps SOLA to count, per mode, the iterations, their time, the
// prefill and decode tokens, and the decoding calls left out of the batch.
type solaProbe struct {
	*SOLA
	decoding map[engine.SeqID]bool
	n        [2]int
	dur, pre [2]float64
	dec, out [2]float64
	preempt  int
}

func (p *solaProbe) Observe(e *engine.Event) {
	switch e.Kind {
	case engine.EvToken:
		if e.Seq.Generated() == 1 {
			p.decoding[e.Seq.ID()] = true
		}
	case engine.EvFinished, engine.EvPaused:
		delete(p.decoding, e.Seq.ID())
	case engine.EvPreempted:
		p.preempt++
		delete(p.decoding, e.Seq.ID())
	case engine.EvIteration:
		m := 0
		if p.TTFTMode() { // the mode this iteration ran in: update comes next
			m = 1
		}
		p.n[m]++
		p.dur[m] += e.Iter.Duration.Seconds()
		p.pre[m] += float64(e.Iter.PrefillTokens)
		p.dec[m] += float64(e.Iter.DecodeTokens)
		p.out[m] += float64(max(len(p.decoding)-e.Iter.DecodeTokens, 0))
	}
	p.SOLA.Observe(e)
}

// TestSOLADiagnostics explains sola's attainment (docs/results-sola.md): per
// rate, sola's attainment and, per mode, the share of time, prefill tokens
// and decodes per iteration and the decoding calls left out; and the same
// policy with prefills in arrival order instead of by predicted TTFT. On
// demand: PITSTOP_SOLA_DIAG=azure-conv PITSTOP_SLO_RATES=6,7,8
// PITSTOP_SLO_TTFT=1.2 PITSTOP_SLO_TPOT=0.13 PITSTOP_SLO_DURATION=600 go test
// ./engine/policy -run TestSOLADiagnostics -v.
func TestSOLADiagnostics(t *testing.T) {
	wname := os.Getenv("PITSTOP_SOLA_DIAG")
	if wname == "" {
		t.Skip("set PITSTOP_SOLA_DIAG to a workload")
	}
	prof, err := sim.LoadProfile(envOr("PITSTOP_SOLA_PROFILE", "a100-80g-llama3-8b"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load(wname, 1)
	if err != nil {
		t.Fatal(err)
	}
	ttft := floats(t, envOr("PITSTOP_SLO_TTFT", "0.4"))[0]
	tpot := floats(t, envOr("PITSTOP_SLO_TPOT", "0.15"))[0]
	dur := floats(t, envOr("PITSTOP_SLO_DURATION", "600"))[0]
	for _, rate := range floats(t, envOr("PITSTOP_SLO_RATES", "6,7,8")) {
		for _, fcfsPre := range []bool{false, true} {
			p := &solaProbe{SOLA: NewSOLA(Options{TTFTSLO: ttft, TPOTSLO: tpot}), decoding: map[engine.SeqID]bool{}}
			p.fcfsPrefills = fcfsPre
			cfg := engine.Config{NumBlocks: prof.NumBlocks(), BlockSize: prof.BlockSize, HostBlocks: prof.HostBlocks(),
				MaxBatchedTokens: prof.MaxBatchedTokens, MaxSeqs: prof.MaxSeqs, SwapBlocksPerIter: prof.Swap.BlocksPerIter,
				Cost: prof.HandlingCost(), HostBlockBytes: prof.BlockBytes()}
			run, err := bench.Run(context.Background(), bench.RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof),
				Policy: p, Name: "sola", Rate: rate, Duration: dur, Seed: 1, SLOTTFT: ttft, SLOTPOT: tpot})
			if err != nil {
				t.Fatal(err)
			}
			name := "sola"
			if fcfsPre {
				name = "sola, prefills in arrival order"
			}
			t.Logf("%s rate %g, %s: attainment %.1f%% (TTFT %.1f%%, TPOT %.1f%%), %d preemptions", wname, rate, name,
				100*run.SLOAttainment, 100*run.SLOTTFTAttainment, 100*run.SLOTPOTAttainment, p.preempt)
			for m, mode := range []string{"TPOT", "TTFT"} {
				n := float64(max(p.n[m], 1))
				t.Logf("    %s mode: %4.1f%% of the time, %6.0f prefill tokens and %5.1f decodes per iteration, %5.1f decoding calls left out",
					mode, 100*p.dur[m]/max(p.dur[0]+p.dur[1], 1e-9), p.pre[m]/n, p.dec[m]/n, p.out[m]/n)
			}
		}
	}
}
