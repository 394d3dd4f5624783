package policy

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/handling"
)

// solaScene: "long" has decoded ~40 tokens at 10 ms each, "young" has just
// generated its first token, "pre" waits for its prefill.
func solaScene(t *testing.T, p *SOLA) (h *harness, now time.Duration) {
	t.Helper()
	noN := p.noN
	p.noN = true // admit the prefills at once (Eq. 2 would let them wait)
	defer func() { p.noN = noN }()
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

// solaCost prices the scenes' iterations for the caps: 9.9 ms plus 0.1 ms a
// token, a 2048-token budget.
var solaCost = handling.CostModel{IterBase: 0.0099, PerToken: 0.0001, TokenBudget: 2048, BlockTokens: 4}

// TestSOLAEq1TokenCap: in TTFT mode k_i is the largest multiple of 128 whose
// iteration keeps Eq. 1 (t^TPOT + C(k)/l_out ≤ T^TPOT) for every decode, at
// the a%-level when loosened, at least one tile; prefills go first and
// decodes after them; TPOT mode has no token cap.
func TestSOLAEq1TokenCap(t *testing.T) {
	p := NewSOLA(Options{TTFTSLO: 10, TPOTSLO: 0.05})
	h, now := solaScene(t, p)
	v := h.view(now+5*time.Millisecond, 50)
	v.Cost = solaCost
	p.ttftMode = true
	// young: t = 5 ms over 1 token, slack 45 ms: (45 − 9.9)/0.1 = 351 tokens
	// → 256. long (≈ 41 tokens at ≈ 10 ms) has seconds of slack.
	if k := p.eq1Tokens(v); k != 256 {
		t.Fatalf("k_i = %d, want 256 (young's slack)", k)
	}
	if lim := p.Shape(v); lim.Tokens != 256 {
		t.Fatalf("Shape in TTFT mode caps %d tokens, want 256", lim.Tokens)
	}
	if got := order(p, v, h.seqs["long"], h.seqs["young"], h.seqs["pre"]); got[0] != "pre" {
		t.Fatalf("TTFT mode order %v, want the prefill first", got)
	}
	// Loosened to a = 1/2: Eq. 1 holds for one of the two decodes (long): no
	// cap below the engine's budget.
	p.level = 0.5
	if k := p.eq1Tokens(v); k != 0 {
		t.Fatalf("k_i = %d at the 50%%-level, want 0 (no cap)", k)
	}
	p.level = 1
	// young past its SLO: no multiple of the tile keeps Eq. 1; one tile.
	v.Now = now + 100*time.Millisecond
	if k := p.eq1Tokens(v); k != solaTile {
		t.Fatalf("k_i = %d with a decode beyond its SLO, want one tile", k)
	}
	p.ttftMode = false
	if lim := p.Shape(v); lim.Tokens != 0 {
		t.Fatalf("TPOT mode caps %d tokens", lim.Tokens)
	}
}

// TestSOLAEq2PrefillCap: in TPOT mode n_i is the fewest prefills whose
// admission keeps Eq. 2 (t^TTFT + C(iteration) + C^p(r) ≤ T^TTFT) for the
// prefills left waiting; C^p(r) counts the prefills queued ahead of r in the
// engine's budget (eq2Own: r's own prefill alone, as Eq. 2 is printed).
func TestSOLAEq2PrefillCap(t *testing.T) {
	p := NewSOLA(Options{TTFTSLO: 1, TPOTSLO: 10})
	h := newHarness(t, p, testConfig()) // budget 32 tokens, ≈ 9.9 ms iterations
	h.submit("dec", "d", "main", 8, []seg{{decode: 500}}, nil)
	h.run(untilIteration(3))
	t0 := h.e.Now()
	for _, n := range []string{"a", "b", "c"} {
		h.submit(n, n, "main", 20, []seg{{decode: 3}}, nil)
	}
	v := h.view(t0, 4)
	v.Running = 1
	// Fresh: every prefill can wait.
	if n := p.eq2Prefills(v); n != 0 {
		t.Fatalf("n_i = %d for fresh prefills, want 0", n)
	}
	p.Shape(v)
	if p.Admit(v, h.seqs["a"], 32) || !p.Admit(v, h.seqs["dec"], 32) {
		t.Fatal("with n_i = 0 a prefill was admitted or the decode refused")
	}
	// After 975 ms: one iteration (9.92 ms) and a's own prefill (9.92 ms)
	// still fit in 1 s, so Eq. 2 as printed admits nothing; queued behind a
	// and b, c's prefill takes two 31-token chunks (19.9 ms) and misses, and
	// admitting a, then b, fills the budget: no cap.
	v.Now = t0 + 975*time.Millisecond
	p.eq2Own = true
	if n := p.eq2Prefills(v); n != 0 {
		t.Fatalf("Eq. 2 as printed: n_i = %d, want 0", n)
	}
	p.eq2Own = false
	if n := p.eq2Prefills(v); n != -1 {
		t.Fatalf("Eq. 2 with the queue: n_i = %d, want -1 (the budget)", n)
	}
	// After 985 ms even a alone misses unless admitted now: n_i ≥ 1.
	v.Now = t0 + 985*time.Millisecond
	p.eq2Own = true
	if n := p.eq2Prefills(v); n != 3 && n != -1 {
		t.Fatalf("Eq. 2 as printed at 985 ms: n_i = %d, want all (3 or no cap)", n)
	}
	p.eq2Own = false
	// Run it: every call finishes and within TTFT.
	p.Shape(v)
	h.run(nil)
	for _, n := range []string{"a", "b", "c", "dec"} {
		if _, ok := h.done[n]; !ok {
			t.Fatalf("%s did not finish", n)
		}
	}
}

// TestSOLAPeakMemoryAdmission: a call whose admission would make the
// predicted peak KV exceed the device is skipped (not a stop: a smaller one
// behind it is admitted), so sola runs a memory-tight mix without the
// preemptions fcfs has.
func TestSOLAPeakMemoryAdmission(t *testing.T) {
	cfg := testConfig()
	cfg.NumBlocks = 48 // 192 tokens
	preemptions := func(p engine.Policy) int {
		h := newHarness(t, p, cfg)
		for i := range 6 {
			h.submit(fmt.Sprintf("c%d", i), fmt.Sprintf("p%d", i), "main", 8, []seg{{decode: 50}}, nil) // peaks at 58 tokens
		}
		h.run(nil)
		if len(h.done) != 6 {
			t.Fatalf("%d of 6 finished", len(h.done))
		}
		n := 0
		for _, s := range h.seqs {
			n += s.Preemptions()
		}
		return n
	}
	if preemptions(FCFS{}) == 0 {
		t.Fatal("the mix does not make fcfs preempt: no test")
	}
	if n := preemptions(NewSOLA(Options{TTFTSLO: 0.001, TPOTSLO: 100})); n != 0 {
		t.Fatalf("sola preempted %d times with peak-memory admission", n)
	}

	// Skip, not stop: a big call that does not fit is passed over for a
	// small one.
	v := &engine.View{TotalBlocks: 48, BlockSize: 4, Cost: testCost()}
	h := newHarness(t, NewSOLA(Options{}), cfg)
	big := h.submit("big", "b", "main", 150, []seg{{decode: 50}}, nil)
	small := h.submit("small", "s", "main", 8, []seg{{decode: 10}}, nil)
	q := NewSOLA(Options{})
	q.Shape(v)
	q.peak.insert(60, 20) // a call on the device: peak 80 tokens
	if q.Admit(v, big, 32) {
		t.Fatal("a call whose peak (80 + 200 tokens) exceeds 192 was admitted")
	}
	if !q.Admit(v, small, 32) {
		t.Fatal("a small call behind it was not admitted")
	}
}

// TestSOLAGamma: the cost model's scale γ follows the measured over
// predicted iteration time (Eq. 5, α = 0.5) and scales the caps' costs.
func TestSOLAGamma(t *testing.T) {
	p := NewSOLA(Options{})
	p.model = handling.CostModel{IterBase: 0.01}
	for _, want := range []float64{1.5, 1.75} {
		p.Observe(&engine.Event{Kind: engine.EvIteration, Iter: &engine.IterationStats{Duration: 20 * time.Millisecond, DecodeTokens: 3}})
		if math.Abs(p.gamma-want) > 1e-9 {
			t.Fatalf("γ = %g, want %g", p.gamma, want)
		}
	}
}

// TestSOLAPeakMatchesLightLLM checks the O(log n) insertion query against
// LightLLM's formula computed from scratch.
func TestSOLAPeakMatchesLightLLM(t *testing.T) {
	brute := func(cur, left []int) int {
		idx := make([]int, len(cur))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return left[b] - left[a] })
		peak, sum := 0, 0
		for j, i := range idx {
			sum += cur[i]
			peak = max(peak, sum+(j+1)*left[i])
		}
		return peak
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var m solaPeak
		m.reset()
		var cur, left []int
		for range rng.IntN(12) {
			c, l := 1+rng.IntN(100), 1+rng.IntN(20)
			cur, left = append(cur, c), append(left, l)
			m.add(c, l)
		}
		m.build()
		for range 5 {
			c, l := 1+rng.IntN(100), 1+rng.IntN(20)
			want := brute(append(slices.Clone(cur), c), append(slices.Clone(left), l))
			if got := m.with(c, l); got != want {
				t.Fatalf("peak with (%d, %d) over %v / %v = %d, want %d", c, l, cur, left, got, want)
			}
			m.insert(c, l)
			cur, left = append(cur, c), append(left, l)
			if m.peak() != brute(cur, left) {
				t.Fatalf("peak after insert %d, want %d", m.peak(), brute(cur, left))
			}
		}
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
// prefill and decode tokens, the decoding calls left out of the batch, the
// caps and the admissions refused by n_i and by the peak-memory rule.
type solaProbe struct {
	*SOLA
	decoding  map[engine.SeqID]bool
	n         [2]int
	dur, pre  [2]float64
	dec, out  [2]float64
	kSum      float64 // k_i over the TTFT-mode iterations it capped
	kN        int
	nZero     int // TPOT-mode iterations with n_i = 0
	refN      int // admissions refused by n_i
	refPeak   int // admissions refused by the peak-memory rule
	preempt   int
	chunks    map[engine.SeqID]int  // prefill iterations admitted so far
	firstTPOT map[engine.SeqID]bool // first admitted in TPOT mode
	miss      [2][2]int             // TTFT misses by [first admitted in TPOT mode][prefilled in several iterations]
	hit       [2][2]int
}

func (p *solaProbe) Shape(v *engine.View) engine.BatchLimits {
	lim := p.SOLA.Shape(v)
	k, n := p.Caps()
	if p.TTFTMode() && k > 0 {
		p.kSum += float64(k)
		p.kN++
	}
	if !p.TTFTMode() && n == 0 {
		p.nZero++
	}
	return lim
}

func (p *solaProbe) Admit(v *engine.View, s *engine.Sequence, budget int) bool {
	nCapped := s.Generated() == 0 && p.nCap >= 0 && p.prefills >= p.nCap
	ok := p.SOLA.Admit(v, s, budget)
	if ok && s.Generated() == 0 {
		if p.chunks[s.ID()] == 0 {
			p.firstTPOT[s.ID()] = !p.TTFTMode()
		}
		p.chunks[s.ID()]++
	}
	switch {
	case ok:
	case nCapped:
		p.refN++
	default:
		p.refPeak++
	}
	return ok
}

func (p *solaProbe) Observe(e *engine.Event) {
	switch e.Kind {
	case engine.EvToken:
		if e.Seq.Generated() == 1 {
			p.decoding[e.Seq.ID()] = true
			id := e.Seq.ID()
			a, b := btoi(p.firstTPOT[id]), btoi(p.chunks[id] > 1)
			if (e.Time - e.Seq.Arrival()).Seconds() > p.ttft+1e-9 {
				p.miss[a][b]++
			} else {
				p.hit[a][b]++
			}
			delete(p.chunks, id)
			delete(p.firstTPOT, id)
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

// solaVariants are the ablations TestSOLADiagnostics runs by name.
var solaVariants = map[string]func(*SOLA){
	"sola":           func(*SOLA) {},
	"eq2-as-printed": func(p *SOLA) { p.eq2Own = true },
	"no-n":           func(p *SOLA) { p.noN = true },
	"no-k":           func(p *SOLA) { p.noK = true },
	"no-peak":        func(p *SOLA) { p.noPeak = true },
	"no-caps":        func(p *SOLA) { p.noN, p.noK, p.noPeak = true, true, true },
	"no-gamma":       func(p *SOLA) { p.noGamma = true },
	"fcfs-prefills":  func(p *SOLA) { p.fcfsPrefills = true },
}

// TestSOLADiagnostics explains sola's attainment (docs/results-sola.md): per
// rate and variant (PITSTOP_SOLA_VARIANTS, default sola,no-caps: the paper's
// rules, and without n_i, k_i and the peak-memory admission; also
// eq2-as-printed, no-n, no-k, no-peak, fcfs-prefills), the attainment and,
// per mode, the share of time, prefill tokens and decodes per iteration, the
// decoding calls left out, the caps and the admissions they refused. On
// demand: PITSTOP_SOLA_DIAG=azure-conv PITSTOP_SLO_RATES=6,7,8
// PITSTOP_SLO_TTFT=1.2 PITSTOP_SLO_TPOT=0.13 PITSTOP_SLO_DURATION=600 go test
// ./engine/policy -run TestSOLADiagnostics -v (PITSTOP_SOLA_PROFILE: a
// profile name or .json path, default a100-80g-llama3-8b).
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
	variants := strings.Split(envOr("PITSTOP_SOLA_VARIANTS", "sola,no-caps"), ",")
	for _, rate := range floats(t, envOr("PITSTOP_SLO_RATES", "6,7,8")) {
		for _, name := range variants {
			set, ok := solaVariants[name]
			if !ok {
				t.Fatalf("unknown variant %q", name)
			}
			p := &solaProbe{SOLA: NewSOLA(Options{TTFTSLO: ttft, TPOTSLO: tpot}), decoding: map[engine.SeqID]bool{},
				chunks: map[engine.SeqID]int{}, firstTPOT: map[engine.SeqID]bool{}}
			set(p.SOLA)
			cfg := engine.Config{NumBlocks: prof.NumBlocks(), BlockSize: prof.BlockSize, HostBlocks: prof.HostBlocks(),
				MaxBatchedTokens: prof.MaxBatchedTokens, MaxSeqs: prof.MaxSeqs, SwapBlocksPerIter: prof.Swap.BlocksPerIter,
				Cost: prof.HandlingCost(), HostBlockBytes: prof.BlockBytes()}
			run, err := bench.Run(context.Background(), bench.RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof),
				Policy: p, Name: "sola", Rate: rate, Duration: dur, Seed: 1, SLOTTFT: ttft, SLOTPOT: tpot})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s rate %g, %s: attainment %.1f%% (TTFT %.1f%%, TPOT %.1f%%), TTFT mean %.3f s, TPOT mean %.1f ms, %d preemptions; refused by n_i %d, by peak memory %d",
				wname, rate, name, 100*run.SLOAttainment, 100*run.SLOTTFTAttainment, 100*run.SLOTPOTAttainment,
				run.TTFTMeanS, 1000*run.TPOTMeanS, p.preempt, p.refN, p.refPeak)
			t.Logf("    first tokens (TTFT misses) by the mode of the prefill's first admission and its iterations: TTFT mode, one %d (%d), several %d (%d); TPOT mode, one %d (%d), several %d (%d)",
				p.hit[0][0]+p.miss[0][0], p.miss[0][0], p.hit[0][1]+p.miss[0][1], p.miss[0][1],
				p.hit[1][0]+p.miss[1][0], p.miss[1][0], p.hit[1][1]+p.miss[1][1], p.miss[1][1])
			for m, mode := range []string{"TPOT", "TTFT"} {
				n := float64(max(p.n[m], 1))
				caps := fmt.Sprintf("n_i = 0 in %.0f%% of them", 100*float64(p.nZero)/n)
				if m == 1 {
					caps = fmt.Sprintf("k_i below the budget in %.0f%% of them, mean %.0f", 100*float64(p.kN)/n, p.kSum/float64(max(p.kN, 1)))
				}
				t.Logf("    %s mode: %4.1f%% of the time, %6.0f prefill tokens and %5.1f decodes per iteration, %5.1f decoding calls left out; %s",
					mode, 100*p.dur[m]/max(p.dur[0]+p.dur[1], 1e-9), p.pre[m]/n, p.dec[m]/n, p.out[m]/n, caps)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
