package policy

import "github.com/pitstop-llm/pitstop/engine"

// enterKeepingQueue is enter's service with keepQueue (PitstopTail
// "aging+warm+first-final-gated-fit-queue") for a call admitted at t under
// the scale k, iter the mean iteration: it returns the end of the call's
// device work and keeps in lastOwn the unscaled prediction of its own
// time (prefill, decode and tool) for the scale to learn from.
//
// Why: the scale corrects the service model (the forecast's lengths, the
// mean iteration) by the engine's observed own times, end-to-end less
// waits. Those hold no arrival-order prefill queue: the engine runs its own
// order, and pitstop's admits the short prompts of a burst at once while
// the shadow's prefill queue grows. The plain shadow scales its whole time
// from admission, the queue included, and learns the scale against its own
// scaled prediction (so it settles at the square root of the ratio): in a
// burst the queue grows, the observed own times do not, the scale falls
// and cancels the queue. At azure-code @1.35 it fell to 0.3-0.6 in the
// bursts and the shadow's p99 was 48 s against fcfs's 76 s (66 s with the
// queue kept; docs/results-policies.md, session 14). Scaling the service
// alone keeps the queue, which the shadow models directly.
func (f *fcfsShadow) enterKeepingQueue(v *engine.View, t float64, w shadowWork, k, iter float64) float64 {
	queue := max(f.prefilled-t, 0)
	pre := float64(w.prefill) / prefillRate(v)
	f.prefilled = t + queue + pre
	dev := pre + float64(w.decode)*iter
	f.lastOwn = dev + w.tool
	return t + queue + k*dev
}
