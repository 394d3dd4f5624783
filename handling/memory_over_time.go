package handling

// Segment of a call for memory-over-time (LAMPS): prefill of Prompt tokens,
// PreDecode tokens decoded, a tool of ToolTime seconds returning ToolReturn
// tokens, PostDecode tokens decoded after.
//
// Prompt and PreDecode are taken as at least 1 (a call has a token to start
// from and a tool call is at least one token). A segment with no tool
// (ToolTime, ToolReturn and PostDecode all zero) is a plain call: handling
// does not apply to it. A segment with PostDecode zero but a tool ends when
// the tool returns: its resume is the next segment's prefill (LAMPS's
// multi-API segmentation), so nothing after the tool is charged to it.
//
// Held is how many of the Prompt tokens are already computed and kept (on
// the device, or on the host to be swapped in): their prefill is not paid
// again, so the prefill's staircase starts from them. Zero prices the whole
// prompt as a prefill, as for a new call or a discarded one.
type Segment struct {
	Prompt, PreDecode int
	ToolTime          float64
	ToolReturn        int
	PostDecode        int
	Held              int
}

// Context is C, the computed context tokens of the call when it pauses for
// the tool: Prompt + PreDecode − 1 (the last prefill chunk samples the first
// output token, and the tool call's last sampled token is computed only on
// resume, as in the engine).
func (g Segment) Context() int {
	return max(g.Prompt, 1) + max(g.PreDecode, 1) - 1
}

// hasTool reports whether the segment ends in a tool call.
func (g Segment) hasTool() bool {
	return g.ToolTime > 0 || g.ToolReturn > 0 || g.PostDecode > 0
}

// resumes reports whether the segment continues after its tool.
func (g Segment) resumes() bool { return g.PostDecode > 0 }

// MemoryOverTime is the integral over time of the KV memory (in
// tokens·seconds, multiply by KVBytesPerToken for bytes) the segment occupies
// under kind k, from its admission to its end, in an engine running
// runningTokens other tokens per iteration. It is the area under the curves
// of LAMPS Figure 4; the formulas are in the package documentation. An invalid
// kind is costed as discard. O(1), no allocation.
func MemoryOverTime(seg Segment, k Kind, m CostModel, runningTokens int) float64 {
	return memoryOverTime(seg, k, m, max(runningTokens, 0), m.SwapTime(seg.Context()))
}

// memoryOverTime is MemoryOverTime with r >= 0 and swapT = SwapTime(C)
// computed by the caller.
func memoryOverTime(seg Segment, k Kind, m CostModel, r int, swapT float64) float64 {
	p := max(seg.Prompt, 1)
	d := max(seg.PreDecode, 1)
	c := p + d - 1

	// Before the tool: prefill of what is not held (its last chunk samples
	// output token 1), then d−1 decodes, each holding the tokens computed so
	// far.
	h := min(max(seg.Held, 0), p-1)
	area, _ := m.staircase(p-h, h, r)
	area += m.decodeArea(d-1, p, r)
	if !seg.hasTool() {
		return area
	}
	ret := max(seg.ToolReturn, 0)
	switch k {
	case Preserve:
		area += float64(c) * nonNeg(seg.ToolTime)
	case Swap:
		out := float64(c) * swapT
		area += out
		if seg.resumes() {
			area += out // swap-in holds C again while it is copied back
		}
	}
	if !seg.resumes() {
		return area
	}
	// Resume: the tool call's last token and the tool's return are prefilled
	// (discard: after recomputing C, from nothing), sampling output token 1;
	// then PostDecode−1 decodes.
	if k == Preserve || k == Swap {
		a, _ := m.staircase(1+ret, c, r)
		area += a
	} else {
		a, _ := m.staircase(c+1+ret, 0, r)
		area += a
	}
	area += m.decodeArea(seg.PostDecode-1, c+1+ret, r)
	return area
}

// Load is the engine the segment is scored in: the tokens the other running
// calls add to each iteration and the context tokens they hold.
type Load struct {
	RunningTokens int // tokens the other running calls add per iteration
	OtherRunning  int // C_other: their context tokens
}

// stall is how long handling the segment with kind k holds up the other
// running calls: the recompute's tokens for discard, a swap-out and a
// swap-in for swap, nothing for preserve.
func stall(seg Segment, k Kind, m CostModel, swapT float64) float64 {
	if !seg.hasTool() {
		return 0
	}
	switch k {
	case Swap:
		if seg.resumes() {
			return 2 * swapT
		}
		return swapT
	case Preserve:
		return 0
	}
	if seg.resumes() {
		return m.PerToken * float64(seg.Context())
	}
	return 0
}

// Score is the memory-over-time of the segment under kind k plus what that
// handling costs the other running calls: OtherRunning times the time it
// stalls them (the C_other terms of the waste formulas). In tokens·seconds;
// with OtherRunning zero it equals MemoryOverTime.
func Score(seg Segment, k Kind, m CostModel, load Load) float64 {
	return score(seg, k, m, load, m.SwapTime(seg.Context()))
}

func score(seg Segment, k Kind, m CostModel, load Load, swapT float64) float64 {
	s := memoryOverTime(seg, k, m, max(load.RunningTokens, 0), swapT)
	if load.OtherRunning > 0 {
		s += float64(load.OtherRunning) * stall(seg, k, m, swapT)
	}
	return s
}

// situation is the waste model's view of the segment at its tool call.
func (g Segment) situation(load Load) Situation {
	return Situation{
		Context:       g.Context(),
		OtherRunning:  load.OtherRunning,
		RunningTokens: load.RunningTokens,
		ToolRemaining: g.ToolTime,
	}
}

// Rank = MemoryOverTime under the least-waste kind for that segment (what
// LAMPS sorts by, lower first); returns both. The kind is chosen by Choose at
// the segment's tool call with C = seg.Context(), C_other = 0 and the whole
// tool time ahead; a segment without a tool ranks as a plain call (Preserve).
func Rank(seg Segment, m CostModel, runningTokens int, allowed ...Kind) (float64, Kind) {
	return RankAt(seg, m, Load{RunningTokens: runningTokens}, allowed...)
}

// RankAt is Rank in an engine whose other running calls hold
// load.OtherRunning context tokens: the kind is the least-waste one with that
// C_other, and the score is Score under it (memory-over-time plus the
// handling's cost to the other calls, LAMPS §4.2's "combine this waste with
// our estimation of the context size for batched requests").
func RankAt(seg Segment, m CostModel, load Load, allowed ...Kind) (float64, Kind) {
	swapT := m.SwapTime(seg.Context())
	k := Preserve
	if seg.hasTool() {
		k = pick(tokenWastes(seg.situation(load), m, swapT), allowed)
	}
	return score(seg, k, m, load, swapT), k
}
