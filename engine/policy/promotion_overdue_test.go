package policy

import "testing"

// TestOverdueTailRule: "-overdue" is the default's tail rules plus the
// overdue promotion, "-overdue-trust" that and the rank's weight stepped on
// the waiting calls; the default has neither.
func TestOverdueTailRule(t *testing.T) {
	def, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	ov, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !ov.overdue || ov.trust || def.overdue {
		t.Fatalf("overdue %v trust %v with -overdue, overdue %v without", ov.overdue, ov.trust, def.overdue)
	}
	if ov.overdue = false; ov != def {
		t.Fatalf("-overdue changes other rules: %+v against %+v", ov, def)
	}
	ot, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !ot.overdue || !ot.trust {
		t.Fatalf("-overdue-trust: overdue %v trust %v", ot.overdue, ot.trust)
	}
	if ot.overdue, ot.trust = false, false; ot != def {
		t.Fatalf("-overdue-trust changes other rules: %+v against %+v", ot, def)
	}
	if p := NewPitstop(Options{}); p.deadlines.overdue != nil || p.trust.waiting {
		t.Fatal("the default has an overdue promotion or a waiting-call weight")
	}
	if p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue"}); p.deadlines.overdue == nil || p.trust.waiting {
		t.Fatal("-overdue: want the promotion and no waiting-call weight")
	}
	if p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust"}); p.deadlines.overdue == nil || !p.trust.waiting || !p.tail.trust {
		t.Fatal("-overdue-trust: want the promotion and the waiting-call weight")
	}
}

// TestLaneOverdueCountsPerReRank: a re-rank's counts hold from its roll to
// the next one, and an empty re-rank counts none.
func TestLaneOverdueCountsPerReRank(t *testing.T) {
	var o laneOverdue
	for i := range 50 {
		o.note(i%10 == 0, &callState{})
	}
	if o.late != 0 || o.seen != 0 {
		t.Fatal("counts visible before the re-rank closed")
	}
	o.roll()
	if o.late != 5 || o.seen != 50 {
		t.Fatalf("late %d of %d, want 5 of 50", o.late, o.seen)
	}
	o.roll()
	if o.late != 0 || o.seen != 0 {
		t.Fatalf("empty re-rank: late %d of %d", o.late, o.seen)
	}
}

// TestOverduePromotesTheStarved: with every finished call within the bar
// (the finished-calls gate shut) and a laxity far from running out, an
// unstarted call arrival order would already have finished goes ahead only
// under -overdue and only while the overdue calls pass 1 % of the window
// and the waiting calls; a call whose arrival-order end is still ahead is
// not overdue.
func TestOverduePromotesTheStarved(t *testing.T) {
	for _, c := range []struct {
		name       string
		tail       string
		past       bool // its arrival-order end is behind it
		late, seen int  // the last re-rank's overdue and waiting calls
		want       bool
	}{
		{"overdue, 20 of 1,050 overdue", "aging+warm+first-final-gated-fit-overdue", true, 20, 50, true},
		{"overdue, 10 of 1,050 (<1 %)", "aging+warm+first-final-gated-fit-overdue", true, 10, 50, false},
		{"not past its arrival-order end", "aging+warm+first-final-gated-fit-overdue", false, 20, 50, false},
		{"the default: overdue not read", "aging+warm+first-final-gated-fit", true, 20, 50, false},
	} {
		p := NewPitstop(Options{PitstopTail: c.tail})
		h, long := longWaiter(t, p)
		v := h.view(h.e.Now(), 300)
		age := (v.Now - long.Arrival()).Seconds()
		for range fcfsWindow {
			p.deadlines.shadow.record(4 * age) // a bar far past the call's age: laxity to spare
			p.deadlines.edf.realized.record(age)
		}
		st := stateOf(long)
		st.deadline, st.hasDeadline = v.Now.Seconds()+age, true
		if c.past {
			st.deadline = v.Now.Seconds() - age/4
		}
		if o := p.deadlines.overdue; o != nil {
			o.late, o.seen = c.late, c.seen
		}
		p.deadlines.fit = nil     // memory is not what this test is about
		p.deadlines.rerankAt = -1 // not a full re-rank: the counts set above stand
		if _, ok := p.deadlines.urgent(v, long, st); ok != c.want {
			t.Errorf("%s: promoted %v, want %v", c.name, ok, c.want)
		}
	}
}

// TestRankTrustStepOn: the waiting-call controller keeps w at 1 while no
// more than 1 % of the waiting calls are overdue, lowers it to the floor
// while more are, climbs back once none are, and ignores finished calls.
func TestRankTrustStepOn(t *testing.T) {
	r := newRankTrust(0, false, false)
	r.waiting = true
	for range 100 {
		r.stepOn(2, 200) // 1 %
	}
	if r.weight() != 1 {
		t.Fatalf("1 %% overdue: weight %g, want 1", r.weight())
	}
	r.stepOn(10, 200)
	if w := r.weight(); !(w < 1 && w > 0.5) {
		t.Fatalf("5 %% overdue once: weight %g, want a step below 1", w)
	}
	for range 100 {
		r.stepOn(10, 200)
	}
	if r.weight() != laneThetaMin {
		t.Fatalf("5 %% overdue: weight %g, want the floor", r.weight())
	}
	before := r.weight()
	r.stepOn(0, 0) // no waiting call: nothing learned
	if r.weight() != before {
		t.Fatal("an empty re-rank moved the weight")
	}
	for range 2000 {
		r.stepOn(0, 200)
	}
	if r.weight() != 1 {
		t.Fatalf("none overdue: weight %g, want back at 1", r.weight())
	}
}

// TestOverdueEachCountsACallOnce: a call found overdue at two re-ranks is
// fresh at the first alone; "-overdue-trust-each" sets the switch.
func TestOverdueEachCountsACallOnce(t *testing.T) {
	var o laneOverdue
	a, b := &callState{}, &callState{}
	o.note(true, a)
	o.note(false, b)
	o.roll()
	if o.fresh != 1 || o.late != 1 || o.seen != 2 {
		t.Fatalf("first re-rank: fresh %d late %d of %d, want 1, 1 of 2", o.fresh, o.late, o.seen)
	}
	o.note(true, a)
	o.note(true, b)
	o.roll()
	if o.fresh != 1 || o.late != 2 {
		t.Fatalf("second re-rank: fresh %d late %d, want 1 (b alone is new), 2", o.fresh, o.late)
	}
	if p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust-each"}); !p.trust.each || !p.trust.waiting {
		t.Fatal("-overdue-trust-each: want the per-call waiting controller")
	}
	if p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust"}); p.trust.each {
		t.Fatal("-overdue-trust: the per-call switch is on")
	}
}

// TestShadowCheck: the shadow is taken as honest until fcfsMinCalls calls
// finished and while its mean end-to-end time is at least the reference
// wait plus the mean own time; an overdue call is not counted while it is
// below.
func TestShadowCheck(t *testing.T) {
	c := shadowCheck{shadow: 10, own: 4, n: fcfsMinCalls - 1}
	if !c.honest(100, true) {
		t.Fatal("too few calls: want honest")
	}
	c.n = fcfsMinCalls
	if !c.honest(6, true) || c.honest(6.5, true) || !c.honest(100, false) {
		t.Fatalf("shadow 10 against wait + own 4: honest at 6 %v, at 6.5 %v, unknown wait %v; want true, false, true",
			c.honest(6, true), c.honest(6.5, true), c.honest(100, false))
	}
	p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust-each-checked"})
	if p.deadlines.overdueCheck == nil || !p.trust.each {
		t.Fatal("-checked: want the check and the per-call weight")
	}
	if NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust-each"}).deadlines.overdueCheck != nil {
		t.Fatal("-each has the check")
	}
	h, long := longWaiter(t, p)
	v := h.view(h.e.Now(), 300)
	st := stateOf(long)
	st.deadline, st.hasDeadline = v.Now.Seconds()-1, true // overdue
	*p.deadlines.overdueCheck = shadowCheck{shadow: 10, own: 4, n: fcfsMinCalls}
	p.deadlines.rerankAt = v.Iteration
	p.deadlines.overdue.cur, p.deadlines.overdue.curN = 0, 0          // the harness's own re-ranks counted too
	p.deadlines.referenceWait, p.deadlines.referenceKnown = 100, true // the shadow far below
	p.deadlines.overdueUrgent(v, long, st)
	if o := p.deadlines.overdue; o.curN != 1 || o.cur != 0 {
		t.Fatalf("shadow below: counted %d overdue of %d, want 0 of 1", o.cur, o.curN)
	}
	p.deadlines.referenceWait = 1 // the shadow above
	p.deadlines.overdueUrgent(v, long, st)
	if o := p.deadlines.overdue; o.curN != 2 || o.cur != 1 {
		t.Fatalf("shadow above: counted %d overdue of %d, want 1 of 2", o.cur, o.curN)
	}
}
