package handling

import (
	"math"
	"math/rand/v2"
	"testing"
)

// small is a toy cost model whose numbers are easy to follow by hand.
var small = CostModel{
	IterBase:        0.01,
	PerToken:        0.001,
	TokenBudget:     8,
	KVBytesPerToken: 2,
	SwapPerTransfer: 0.005,
	SwapBandwidth:   1000,
	BlockTokens:     4,
}

// gptj is shaped like the a100-40g-gptj-6b profile (DESIGN §6): 16.92 ms +
// 0.0408 ms per token, 384-token budget, 458,752 KV bytes per token, 16-token
// blocks; the host link (25 GB/s, 10 µs per block copy) is an assumption of
// this test, not a measured profile.
var gptj = CostModel{
	IterBase:        0.01692,
	PerToken:        0.0000408,
	TokenBudget:     384,
	KVBytesPerToken: 458752,
	SwapPerTransfer: 10e-6,
	SwapBandwidth:   25e9,
	BlockTokens:     16,
}

func near(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Preserve: "preserve", Swap: "swap", Discard: "discard", 7: "kind(7)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestCostModel(t *testing.T) {
	gathered := small
	gathered.SwapGathered = true
	unbounded := small
	unbounded.TokenBudget = 0
	noBW := small
	noBW.SwapBandwidth = 0
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"IterTime(3)", small.IterTime(3), 0.013},
		{"IterTime(0)", small.IterTime(0), 0.01},
		{"IterTime(-5)", small.IterTime(-5), 0.01},
		// 10 tokens = 3 blocks of 4 = 24 bytes: 3·0.005 + 24/1000
		{"SwapTime(10) per block", small.SwapTime(10), 0.039},
		{"SwapTime(10) gathered", gathered.SwapTime(10), 0.029},
		{"SwapTime(1)", small.SwapTime(1), 0.013},
		{"SwapTime(0)", small.SwapTime(0), 0},
		{"SwapTime(10) no bandwidth cost", noBW.SwapTime(10), 0.015},
		// spare budget 8−2 = 6: one chunk of 6 (IterTime(8)) + one of 4 (IterTime(6))
		{"RecomputeTime(10,2)", small.RecomputeTime(10, 2), 0.018 + 0.016},
		{"RecomputeTime(10,0)", small.RecomputeTime(10, 0), 0.018 + 0.012},
		// budget full: c_h = 1, ten iterations of IterTime(101)
		{"RecomputeTime(10,100)", small.RecomputeTime(10, 100), 10 * 0.111},
		{"RecomputeTime(10,2) unbounded", unbounded.RecomputeTime(10, 2), 0.022},
		{"RecomputeTime(0,2)", small.RecomputeTime(0, 2), 0},
	}
	for _, c := range cases {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestWasteHandComputed(t *testing.T) {
	s := Situation{Context: 10, OtherRunning: 20, RunningTokens: 2, ToolRemaining: 1.5}
	cases := []struct {
		k    Kind
		want float64
	}{
		// M·T·C = 2·1.5·10
		{Preserve, 30},
		// own: chunk of 6 held 6 for IterTime(8)=0.018, chunk of 4 held 10 for
		// IterTime(6)=0.016 → 0.268; others: 20·0.001·10 = 0.2; ×M=2
		{Discard, 2 * (0.018*6 + 0.016*10 + 20*0.001*10)},
		// 2·SwapTime(10)·(10+20)·M = 2·0.039·30·2
		{Swap, 2 * 0.039 * 30 * 2},
		{Kind(9), math.Inf(1)},
	}
	for _, c := range cases {
		if got := Waste(c.k, s, small); !near(got, c.want) {
			t.Errorf("Waste(%v) = %v, want %v", c.k, got, c.want)
		}
	}
	k, w := Choose(s, small)
	if k != Discard || !near(w[Preserve], 30) || !near(w[Discard], 0.936) || !near(w[Swap], 4.68) {
		t.Errorf("Choose = %v %v, want discard [30 4.68 0.936]", k, w)
	}
	if k, _ := Choose(s, small, Preserve, Swap); k != Swap {
		t.Errorf("Choose(preserve, swap) = %v, want swap", k)
	}
	if k, _ := Choose(s, small, Preserve); k != Preserve {
		t.Errorf("Choose(preserve) = %v, want preserve", k)
	}
	if k, _ := Choose(s, small, Kind(5)); k != Discard {
		t.Errorf("Choose(invalid only) = %v, want discard (all kinds)", k)
	}
	// token·seconds when KV bytes are unknown
	noM := small
	noM.KVBytesPerToken = 0
	if got := Waste(Preserve, s, noM); !near(got, 15) {
		t.Errorf("Waste without KV bytes = %v, want 15 token·s", got)
	}
}

func TestWasteEdges(t *testing.T) {
	// Nothing to keep: every kind wastes nothing and the tie keeps the KV.
	if k, w := Choose(Situation{ToolRemaining: 10}, small); k != Preserve || w != [3]float64{} {
		t.Errorf("empty context: %v %v, want preserve and zeros", k, w)
	}
	// Negative or NaN remaining time is no time.
	for _, tr := range []float64{-3, math.NaN()} {
		if w := Waste(Preserve, Situation{Context: 5, ToolRemaining: tr}, small); w != 0 {
			t.Errorf("preserve waste with remaining %v = %v, want 0", tr, w)
		}
	}
	// A tool that is already over: preserve.
	if k, _ := Choose(Situation{Context: 500, OtherRunning: 3000, RunningTokens: 20}, gptj); k != Preserve {
		t.Errorf("tool over: %v, want preserve", k)
	}
}

func TestWasteMonotone(t *testing.T) {
	base := Situation{Context: 300, OtherRunning: 4000, RunningTokens: 30, ToolRemaining: 0.5}
	t.Run("preserve grows with tool time", func(t *testing.T) {
		prev := -1.0
		for _, tr := range []float64{0, 0.001, 0.1, 1, 10, 100} {
			s := base
			s.ToolRemaining = tr
			w := Waste(Preserve, s, gptj)
			if w <= prev {
				t.Fatalf("T=%v: %v <= %v", tr, w, prev)
			}
			prev = w
		}
	})
	t.Run("discard grows with context", func(t *testing.T) {
		prev := -1.0
		for _, c := range []int{1, 2, 50, 353, 354, 355, 1000, 8000} {
			s := base
			s.Context = c
			w := Waste(Discard, s, gptj)
			if w <= prev {
				t.Fatalf("C=%d: %v <= %v", c, w, prev)
			}
			prev = w
		}
	})
	t.Run("discard grows with running tokens", func(t *testing.T) {
		prev := -1.0
		for _, r := range []int{0, 10, 200, 383, 384, 1000} {
			s := base
			s.RunningTokens = r
			w := Waste(Discard, s, gptj)
			if w <= prev {
				t.Fatalf("r=%d: %v <= %v", r, w, prev)
			}
			prev = w
		}
	})
	t.Run("swap cheaper with more bandwidth", func(t *testing.T) {
		prev := math.Inf(1)
		for _, bw := range []float64{1e9, 5e9, 25e9, 64e9} {
			m := gptj
			m.SwapBandwidth = bw
			w := Waste(Swap, base, m)
			if w >= prev {
				t.Fatalf("bw=%v: %v >= %v", bw, w, prev)
			}
			prev = w
		}
	})
	t.Run("gathered swap no dearer than per-block", func(t *testing.T) {
		g := gptj
		g.SwapGathered = true
		for _, c := range []int{1, 16, 17, 1000} {
			s := base
			s.Context = c
			if Waste(Swap, s, g) > Waste(Swap, s, gptj) {
				t.Fatalf("C=%d: gathered dearer", c)
			}
		}
	})
	t.Run("others' memory raises swap and discard, not preserve", func(t *testing.T) {
		more := base
		more.OtherRunning *= 2
		if Waste(Preserve, more, gptj) != Waste(Preserve, base, gptj) {
			t.Error("preserve depends on C_other")
		}
		for _, k := range []Kind{Swap, Discard} {
			if Waste(k, more, gptj) <= Waste(k, base, gptj) {
				t.Errorf("%v does not grow with C_other", k)
			}
		}
	})
}

func TestChooseShortAndLongTools(t *testing.T) {
	for _, c := range []int{16, 300, 2000} {
		s := Situation{Context: c, OtherRunning: 20000, RunningTokens: 40}
		s.ToolRemaining = 1e-4 // a calculator
		if k, w := Choose(s, gptj); k != Preserve {
			t.Errorf("C=%d, 0.1 ms tool: %v %v, want preserve", c, k, w)
		}
		s.ToolRemaining = 30 // an image generator
		if k, w := Choose(s, gptj); k == Preserve {
			t.Errorf("C=%d, 30 s tool: preserve %v, want swap or discard", c, w)
		}
	}
	// Long tool, short context, slow per-block copies: recomputing a few
	// tokens is cheaper than copying; a long context on a fast link swaps.
	slow := gptj
	slow.SwapPerTransfer = 5e-3
	short := Situation{Context: 20, OtherRunning: 20000, RunningTokens: 40, ToolRemaining: 30}
	if k, w := Choose(short, slow); k != Discard {
		t.Errorf("short context, slow swap: %v %v, want discard", k, w)
	}
	long := Situation{Context: 3000, OtherRunning: 20000, RunningTokens: 40, ToolRemaining: 30}
	fast := gptj
	fast.SwapGathered = true
	if k, w := Choose(long, fast); k != Swap {
		t.Errorf("long context, gathered swap: %v %v, want swap", k, w)
	}
}

func TestMemoryOverTimeHandComputed(t *testing.T) {
	seg := Segment{Prompt: 5, PreDecode: 3, ToolTime: 2, ToolReturn: 2, PostDecode: 2}
	// r = 2, spare budget 6, C = 5+3−1 = 7.
	// before: prefill 5 in one chunk, IterTime(7)=0.017 holding 5 → 0.085;
	//         2 decodes of IterTime(3)=0.013 holding 6, 7 → 0.169.
	// resume on the device: 1+2 tokens in one chunk of IterTime(5)=0.015
	//         holding 10 → 0.15; 1 decode holding 11 → 0.143.
	// SwapTime(7) = 2 blocks: 2·0.005 + 16 B/1000 = 0.026.
	// discard resume: 10 tokens from 0: chunk 6 (0.018, holds 6) + chunk 4
	//         (0.016, holds 10) → 0.268.
	before, after := 0.085+0.169, 0.143
	want := map[Kind]float64{
		Preserve: before + 7*2 + 0.15 + after,
		Swap:     before + 2*7*0.026 + 0.15 + after,
		Discard:  before + 0.268 + after,
	}
	for k, w := range want {
		if got := MemoryOverTime(seg, k, small, 2); !near(got, w) {
			t.Errorf("MemoryOverTime(%v) = %v, want %v", k, got, w)
		}
	}
	// Score charges the others: C_other·2·SwapTime for swap, C_other·PerToken·C for discard.
	load := Load{RunningTokens: 2, OtherRunning: 20}
	wantScore := map[Kind]float64{
		Preserve: want[Preserve],
		Swap:     want[Swap] + 20*2*0.026,
		Discard:  want[Discard] + 20*0.001*7,
	}
	for k, w := range wantScore {
		if got := Score(seg, k, small, load); !near(got, w) {
			t.Errorf("Score(%v) = %v, want %v", k, got, w)
		}
	}
	// Waste at the tool (C=7, T=2, r=2, C_other 0): preserve 28, swap 0.728,
	// discard (0.018·6 + 0.013·7)·2 = 0.398 → discard.
	score, k := Rank(seg, small, 2)
	if k != Discard || !near(score, want[Discard]) {
		t.Errorf("Rank = %v %v, want %v discard", score, k, want[Discard])
	}
	if score, k := Rank(seg, small, 2, Preserve, Swap); k != Swap || !near(score, want[Swap]) {
		t.Errorf("Rank(preserve, swap) = %v %v, want %v swap", score, k, want[Swap])
	}
}

func TestMemoryOverTimeShapes(t *testing.T) {
	plain := Segment{Prompt: 5, PreDecode: 3}
	want := 0.085 + 0.169
	for _, k := range []Kind{Preserve, Swap, Discard} {
		if got := MemoryOverTime(plain, k, small, 2); !near(got, want) {
			t.Errorf("no tool, %v: %v, want %v", k, got, want)
		}
	}
	if _, k := Rank(plain, small, 2); k != Preserve {
		t.Errorf("no tool ranks as %v", k)
	}
	// Ends at the tool: preserve holds C through it, swap pays the copy out only.
	end := Segment{Prompt: 5, PreDecode: 3, ToolTime: 2}
	for k, w := range map[Kind]float64{Preserve: want + 14, Swap: want + 7*0.026, Discard: want} {
		if got := MemoryOverTime(end, k, small, 2); !near(got, w) {
			t.Errorf("ends at tool, %v: %v, want %v", k, got, w)
		}
	}
	// Degenerate counts are clamped: an empty prompt is one token.
	if a, b := MemoryOverTime(Segment{PreDecode: 3}, Preserve, small, 0), MemoryOverTime(Segment{Prompt: 1, PreDecode: 3}, Preserve, small, 0); a != b {
		t.Errorf("empty prompt %v != one-token prompt %v", a, b)
	}
}

func TestMemoryOverTimeMonotone(t *testing.T) {
	base := Segment{Prompt: 400, PreDecode: 60, ToolTime: 3, ToolReturn: 40, PostDecode: 80}
	grow := []struct {
		name string
		f    func(*Segment)
	}{
		{"prompt", func(s *Segment) { s.Prompt += 100 }},
		{"pre-decode", func(s *Segment) { s.PreDecode += 10 }},
		{"tool return", func(s *Segment) { s.ToolReturn += 30 }},
		{"post-decode", func(s *Segment) { s.PostDecode += 10 }},
	}
	for _, g := range grow {
		bigger := base
		g.f(&bigger)
		for _, k := range []Kind{Preserve, Swap, Discard} {
			if MemoryOverTime(bigger, k, gptj, 50) <= MemoryOverTime(base, k, gptj, 50) {
				t.Errorf("%v does not grow with %s", k, g.name)
			}
		}
	}
	longer := base
	longer.ToolTime = 30
	if MemoryOverTime(longer, Preserve, gptj, 50) <= MemoryOverTime(base, Preserve, gptj, 50) {
		t.Error("preserve does not grow with tool time")
	}
	for _, k := range []Kind{Swap, Discard} {
		if MemoryOverTime(longer, k, gptj, 50) != MemoryOverTime(base, k, gptj, 50) {
			t.Errorf("%v depends on tool time", k)
		}
	}
	// More running work makes every iteration longer and the chunks smaller.
	for _, k := range []Kind{Preserve, Swap, Discard} {
		if MemoryOverTime(base, k, gptj, 300) <= MemoryOverTime(base, k, gptj, 10) {
			t.Errorf("%v does not grow with running tokens", k)
		}
	}
	// Rank prefers a short tool's call to a long one's, all else equal.
	if a, _ := Rank(base, gptj, 50); func() bool { b, _ := Rank(longer, gptj, 50); return a > b }() {
		t.Error("longer tool ranks ahead")
	}
}

// bruteMoT walks the segment iteration by iteration, as an engine would, and
// sums duration × memory held; it checks the closed forms.
func bruteMoT(g Segment, k Kind, m CostModel, r int) float64 {
	var area float64
	held := 0
	compute := func(n int) { // prefill n tokens in chunks on top of held
		for n > 0 {
			c := n
			if m.TokenBudget > 0 {
				c = min(n, max(m.TokenBudget-r, 1))
			}
			held += c
			area += m.IterTime(r+c) * float64(held)
			n -= c
		}
	}
	decode := func(n int) {
		for range n {
			held++
			area += m.IterTime(r+1) * float64(held)
		}
	}
	p, d := max(g.Prompt, 1), max(g.PreDecode, 1)
	compute(p)
	decode(d - 1)
	if !g.hasTool() {
		return area
	}
	switch k {
	case Preserve:
		area += float64(held) * g.ToolTime
	case Swap:
		area += float64(held) * m.SwapTime(held)
	}
	if g.PostDecode <= 0 {
		return area
	}
	switch k {
	case Swap:
		area += float64(held) * m.SwapTime(held)
	case Discard:
		// the recompute and the pending tokens are one prefill, as the
		// engine schedules them (Remaining = all uncomputed tokens)
		c := held
		held = 0
		compute(c + 1 + g.ToolReturn)
		decode(g.PostDecode - 1)
		return area
	}
	compute(1 + g.ToolReturn)
	decode(g.PostDecode - 1)
	return area
}

func TestMemoryOverTimeMatchesStepByStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	models := []CostModel{small, gptj, {IterBase: 1, PerToken: 0.5, TokenBudget: 3, BlockTokens: 2, SwapPerTransfer: 0.25, SwapGathered: true}}
	for i := range 3000 {
		m := models[i%len(models)]
		g := Segment{
			Prompt:     1 + rng.IntN(900),
			PreDecode:  1 + rng.IntN(200),
			ToolTime:   rng.Float64() * 5,
			ToolReturn: rng.IntN(300),
			PostDecode: rng.IntN(150),
		}
		r := rng.IntN(500)
		for _, k := range []Kind{Preserve, Swap, Discard} {
			got, want := MemoryOverTime(g, k, m, r), bruteMoT(g, k, m, r)
			if math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("%+v %v r=%d: closed form %v, step by step %v", g, k, r, got, want)
			}
		}
		if k := Kind(rng.IntN(3)); true {
			s := g.situation(Load{RunningTokens: r})
			if _, kr := Rank(g, m, r, k); kr != k {
				t.Fatalf("Rank(allowed %v) chose %v", k, kr)
			}
			ck, _ := Choose(s, m)
			if _, kr := Rank(g, m, r); kr != ck {
				t.Fatalf("Rank chose %v, Choose %v", kr, ck)
			}
		}
	}
}

// TestTransferTime prices moves of whole blocks, worked by hand: GPT-J 6B's
// 458,752 B/token in 16-token blocks is 7,340,032 B per block (all 28
// layers); 100 blocks are 734,003,200 B, 0.029360128 s at 25 GB/s.
func TestTransferTime(t *testing.T) {
	const us, gb = 1e-6, 1e9
	link := CostModel{KVBytesPerToken: 458752, BlockTokens: 16, SwapBandwidth: 25 * gb}
	with := func(f func(*CostModel)) CostModel { m := link; f(&m); return m }
	cases := []struct {
		name   string
		m      CostModel
		blocks int
		want   float64
	}{
		{"gathered: one transfer", with(func(m *CostModel) { m.SwapPerTransfer, m.SwapGathered = 10*us, true }), 100, 0.029360128 + 10e-6},
		{"per block: 100 transfers", with(func(m *CostModel) { m.SwapPerTransfer = 10 * us }), 100, 0.029360128 + 1e-3},
		{"per layer: 100 × 28 transfers", with(func(m *CostModel) { m.SwapPerTransfer, m.SwapCopiesPerBlock = 10*us, 28 }), 100, 0.029360128 + 0.028},
		{"gathered ignores copies", with(func(m *CostModel) { m.SwapPerTransfer, m.SwapCopiesPerBlock, m.SwapGathered = 10*us, 28, true }), 100, 0.029360128 + 10e-6},
		{"one block", with(func(m *CostModel) { m.SwapPerTransfer = 5 * us }), 1, 293.60128e-6 + 5e-6},
		{"no bandwidth cost", CostModel{SwapPerTransfer: 2 * us}, 3, 6e-6},
		{"zero blocks", with(func(m *CostModel) { m.SwapPerTransfer, m.SwapGathered = 10*us, true }), 0, 0},
		{"zero value", CostModel{}, 50, 0},
	}
	for _, c := range cases {
		if got := c.m.TransferTime(c.blocks); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: TransferTime(%d) = %.12g s, want %.12g s", c.name, c.blocks, got, c.want)
		}
	}
	for _, c := range []struct {
		m            CostModel
		blocks, want int
	}{
		{CostModel{SwapGathered: true}, 7, 1},
		{CostModel{}, 7, 7},
		{CostModel{SwapCopiesPerBlock: 1}, 7, 7},
		{CostModel{SwapCopiesPerBlock: 28}, 7, 196},
		{CostModel{SwapCopiesPerBlock: 28}, 0, 0},
		{CostModel{SwapGathered: true}, 0, 0},
	} {
		if got := c.m.Transfers(c.blocks); got != c.want {
			t.Errorf("%+v.Transfers(%d) = %d, want %d", c.m, c.blocks, got, c.want)
		}
	}
	// SwapTime moves the whole blocks that hold the tokens: 17 tokens are 2 blocks.
	perBlock := with(func(m *CostModel) { m.SwapPerTransfer = 10 * us })
	if got, want := perBlock.SwapTime(17), perBlock.TransferTime(2); got != want {
		t.Errorf("SwapTime(17) = %g, TransferTime(2) = %g", got, want)
	}
}
