package runtime

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// explainHandling says why a call paused at a tool call got handling k
// (engine goroutine, at the EvPaused event, when the engine's view is the
// one the policy just decided on): the policy, the call's context, the
// predicted tool time, the context of the other calls that ran in the last
// iteration (C_other) and, in the
// engine's cost model, the waste of each kind by InferCept's equations
// (memory held idle or spent recomputing, byte·seconds). The least waste
// is what InferCept picks; other policies have their own rules, and the
// text says so when their choice differs.
func (rt *Runtime) explainHandling(seq *engine.Sequence, k handling.Kind, context int) string {
	v := rt.eng.HandlingView(seq)
	sit := v.Situation(seq)
	sit.Context = context // the context the policy decided on (a discard has freed it since)
	needed := seq.ResidentBlocks()
	if v.BlockSize > 0 && needed == 0 {
		needed = (context + v.BlockSize - 1) / v.BlockSize
	}
	var allowed []handling.Kind
	if v.HostFree < needed {
		allowed = []handling.Kind{handling.Preserve, handling.Discard}
	}
	best, w := handling.Choose(sit, v.Cost, allowed...)
	var b strings.Builder
	fmt.Fprintf(&b, "policy %s chose %s: context %d tokens, tool predicted %v, batch context %d tokens; waste (InferCept model) preserve %s, swap %s, discard %s",
		rt.policyName, k, sit.Context, seconds(sit.ToolRemaining), sit.OtherRunning,
		rt.waste(w[handling.Preserve]), rt.waste(w[handling.Swap]), rt.waste(w[handling.Discard]))
	if allowed != nil {
		fmt.Fprintf(&b, " (swap impossible: %d host blocks free, %d needed)", v.HostFree, needed)
	}
	if k == best {
		fmt.Fprintf(&b, "; %s wastes least", k)
	} else {
		fmt.Fprintf(&b, "; the least waste would be %s: the policy decides by its own rule", best)
	}
	if k == handling.Discard {
		// The runtime always runs the prefix cache (engine.WithPrefixCache): the
		// freed blocks stay findable until evicted, which InferCept's model,
		// pricing a discard as a full recompute, does not count.
		b.WriteString(" (the discarded blocks stay in the prefix cache until other calls need the memory, so the call may find its context there when the tool returns)")
	}
	return b.String()
}

// seconds is a duration in seconds, rounded for reading.
func seconds(s float64) time.Duration {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// waste formats a waste in byte·seconds with a binary unit (token·seconds
// when the cost model does not know the KV size of a token).
func (rt *Runtime) waste(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	if rt.ecfg.Cost.KVBytesPerToken <= 0 {
		return fmt.Sprintf("%.3g token·s", v)
	}
	units := []string{"B·s", "KiB·s", "MiB·s", "GiB·s", "TiB·s"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.3g %s", v, units[i])
}
