package policy

import (
	"math"

	"github.com/pitstop-llm/pitstop/engine"
)

// shadowBand is shadowCheck's test with a confidence band (PitstopTail
// "...-overdue-trust-each-evident"): over the reference wait's own window
// (fcfsAlpha, about the last 20 calls in service weight) it compares the
// shadow's mean wait (its end-to-end time less the call's own time) with
// the conservation law's wait (the service-weighted mean wait of the same
// calls), and calls the shadow early only while it is below by more than
// p99Z standard errors of the difference.
//
// Why: the plain check over about 1,000 calls lets the overdue signal
// through ~100 s late at azure-conv @6 (p99 1.013x its bar); over the
// wait's 20-call window it is in time there but reads noise as honesty on
// azure-code (docs/results-policies.md, session 17, starve17). A window
// that short is only as good as its noise, so the test asks the same
// evidence as "-trust-evident" (rankTrust.pastQuantile): the shadow is
// silenced where it is below beyond its sampling error, and read where
// the two cannot be told apart. No new constant: the window is the
// reference's, the band p99Z.
//
// With strict ("...-overdue-trust-each-checked-evident") the test is the
// other side of the same band over the check's own window (about the last
// fcfsWindow calls): the shadow is read only while its mean wait is above
// arrival order's by more than p99Z standard errors, so the signal needs
// evidence that the shadow is not early, as "-trust-evident"'s step down
// needs evidence of a tail.
type shadowBand struct {
	y, yy, a, b float64 // decayed Σ y, Σ y², Σ 1, Σ 1² (each weight squared): y the shadow's wait, seconds
	w, ww, s, q float64 // decayed Σ S·W, Σ S·W², Σ S, Σ S²: the waits weighted by service
	n           int
	strict      bool // the shadow read only above arrival order's beyond the band, over about fcfsWindow calls
}

// observe records a finished call's shadow wait (deadline less arrival less
// own time) and its wait weighted by its service.
func (b *shadowBand) observe(e *engine.Event) {
	if e.Kind != engine.EvFinished || e.Seq.Cancelled() || e.Err != nil {
		return
	}
	st := stateOf(e.Seq)
	svc := e.Seq.Service().Seconds()
	if !st.hasDeadline || svc <= 0 {
		return
	}
	a := e.Seq.Arrival().Seconds()
	wait := e.Seq.Waited().Seconds()
	own := (e.Seq.FinishedAt() - e.Seq.Arrival()).Seconds() - wait
	y := st.deadline - a - own
	b.add(y, wait, svc)
}

// add decays the sums by 1 − fcfsAlpha (strict: 1 − 1/fcfsWindow) and adds
// one call.
func (b *shadowBand) add(y, wait, svc float64) {
	d := 1 - fcfsAlpha
	if b.strict {
		d = 1 - 1.0/fcfsWindow
	}
	d2 := d * d
	b.y, b.yy, b.a, b.b = d*b.y+y, d*b.yy+y*y, d*b.a+1, d2*b.b+1
	b.w, b.ww, b.s, b.q = d*b.w+svc*wait, d*b.ww+svc*wait*wait, d*b.s+svc, d2*b.q+svc*svc
	b.n++
}

// gap is the shadow's mean wait less arrival order's, and its standard
// error: each mean's weighted variance over its effective number of calls
// (Kish's (Σ weight)² / Σ weight²).
func (b *shadowBand) gap() (float64, float64) {
	my, mw := b.y/b.a, b.w/b.s
	vy := max(b.yy/b.a-my*my, 0) / (b.a * b.a / b.b)
	vw := max(b.ww/b.s-mw*mw, 0) / (b.s * b.s / b.q)
	return my - mw, math.Sqrt(vy + vw)
}

// honest reports whether the shadow is not below arrival order's wait by
// more than p99Z standard errors (strict: above it by more than that);
// until fcfsMinCalls calls finished it is taken as honest.
func (b *shadowBand) honest() bool {
	if b.n < fcfsMinCalls || b.a <= 0 || b.s <= 0 {
		return true
	}
	g, se := b.gap()
	if b.strict {
		return g > p99Z*se
	}
	return g >= -p99Z*se
}
