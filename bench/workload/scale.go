package workload

import (
	"fmt"
	"math"
)

// Scale shrinks (or stretches) the workload in place, for executors far slower
// than the GPUs the traces come from (pitstop bench --executor cpu): every
// token count — NewTokens, SharedPrefixBlock, each segment's Decode and
// ToolReturn — is multiplied by tokens and rounded, a count that was positive
// staying at least 1 (so a segment that generated still generates, and a
// 0-token final segment stays one); every duration — ToolTime, ThinkTime and
// the programs' own Arrival times — is multiplied by time. Both factors must
// be positive and finite. When either differs from 1 the workload's name gets
// a suffix that says so ("-tok0.25-time0.1"), so that reports of a scaled
// replay are not taken for the full one. Program structure (calls, segments,
// parents, prefix ids) is unchanged, so the same seed draws the same
// programs at the same arrival times.
func (w *Workload) Scale(tokens, time float64) error {
	for _, f := range []float64{tokens, time} {
		if !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("workload scale factors must be positive and finite, got tokens %g, time %g", tokens, time)
		}
	}
	if tokens == 1 && time == 1 {
		return nil
	}
	tok := func(n int) int {
		if n <= 0 || tokens == 1 {
			return n
		}
		return max(1, int(math.Round(float64(n)*tokens)))
	}
	for pi := range w.Programs {
		p := &w.Programs[pi]
		p.Arrival *= time
		for ci := range p.Calls {
			c := &p.Calls[ci]
			c.NewTokens = tok(c.NewTokens)
			c.SharedPrefixBlock = tok(c.SharedPrefixBlock)
			c.ThinkTime *= time
			for si := range c.Segments {
				s := &c.Segments[si]
				s.Decode = tok(s.Decode)
				s.ToolReturn = tok(s.ToolReturn)
				s.ToolTime *= time
			}
		}
	}
	if tokens != 1 {
		w.Name += fmt.Sprintf("-tok%g", tokens)
	}
	if time != 1 {
		w.Name += fmt.Sprintf("-time%g", time)
	}
	w.Notes = append(w.Notes, fmt.Sprintf("scaled: token counts x%g (a positive count stays >= 1), tool, think and arrival times x%g", tokens, time))
	return nil
}
