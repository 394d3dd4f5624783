package policy

import (
	"math"
	"testing"
)

// TestForecastTailRule: "-forecast-fit" is the default's lane with the
// forecast trigger in place of the finished-calls one, nothing else.
func TestForecastTailRule(t *testing.T) {
	def, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-forecast-fit", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !f.forecast || f.gated || def.forecast {
		t.Fatalf("forecast %v gated %v with -forecast, forecast %v without", f.forecast, f.gated, def.forecast)
	}
	g := f
	g.forecast, g.gated = false, true
	if g != def {
		t.Fatalf("-forecast changes other rules: %+v against %+v", g, def)
	}
	if p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-forecast-fit-queue"}); p.deadlines.forecast == nil || !p.deadlines.shadow.keepQueue || p.deadlines.gated {
		t.Fatal("-forecast-fit-queue: want the forecast trigger and the shadow's queue, not the finished-calls gate")
	}
	sl, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-forecast-slack-fit", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !sl.slack || !NewPitstop(Options{PitstopTail: "aging+warm+first-final-forecast-slack-fit"}).deadlines.forecast.slack {
		t.Fatal("-forecast-slack-fit: want the slack bound on")
	}
	if sl.slack = false; sl != f {
		t.Fatalf("-slack changes other rules: %+v against %+v", sl, f)
	}
	qc, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-forecast-slack-fit-queue-cached", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	if qc.queue, qc.cached, qc.slack = false, false, false; qc != f {
		t.Fatalf("-queue-cached changes more than the shadow: %+v against %+v", qc, sl)
	}
	if NewPitstop(Options{}).deadlines.forecast != nil {
		t.Fatal("the default has no forecast")
	}
}

// TestLaneForecastCountsInRankOrder: each noted call is predicted to end
// after the prefill of the calls ranked ahead of it (class first, then
// key), whatever order they were noted in.
func TestLaneForecastCountsInRankOrder(t *testing.T) {
	var f laneForecast
	// noted out of order: c (key 3) after a (1) and b (2), all 10 s of prefill
	f.note(100, forecastCall{class: 2, key: 3, prefill: 10, rest: 12, due: 135}) // ends 100+20+12 = 132: in time
	f.note(100, forecastCall{class: 2, key: 1, prefill: 10, rest: 12, due: 111}) // ends 112: late
	f.note(100, forecastCall{class: 2, key: 2, prefill: 10, rest: 12, due: 125}) // ends 122: in time
	f.note(100, forecastCall{class: 3, key: 0, prefill: 10, rest: 5, due: 130})  // behind the three: 135, late
	f.roll()
	if f.late != 2 || f.seen != 4 {
		t.Fatalf("late %d of %d, want 2 of 4", f.late, f.seen)
	}
	if len(f.noted) != 0 {
		t.Fatal("roll keeps the noted calls")
	}
	f.roll() // a re-rank with no waiting calls forecasts none late
	if f.late != 0 || f.seen != 0 {
		t.Fatalf("empty re-rank: late %d of %d", f.late, f.seen)
	}
}

// TestForecastOpensOnTheQueue: with the finished calls all within arrival
// order's p99, the forecast lane promotes an urgent unstarted call only
// when more than 1 % of the finished and waiting calls together are
// forecast late; the finished-calls gate stays shut in both cases.
func TestForecastOpensOnTheQueue(t *testing.T) {
	for _, c := range []struct {
		name       string
		tail       string
		late, seen int
		want       bool
	}{
		{"forecast: no waiting call late", "aging+warm+first-final-forecast-fit", 0, 50, false},
		{"forecast: 10 of 1,050 late (<1 %)", "aging+warm+first-final-forecast-fit", 10, 50, false},
		{"forecast: 20 of 1,050 late", "aging+warm+first-final-forecast-fit", 20, 50, true},
		{"gated: 20 forecast late, not read", "aging+warm+first-final-gated-fit", 20, 50, false},
	} {
		p := NewPitstop(Options{PitstopTail: c.tail})
		h, long := longWaiter(t, p)
		v := h.view(h.e.Now(), 300)
		half := (v.Now - long.Arrival()).Seconds() / 2
		for range fcfsWindow {
			p.deadlines.shadow.record(half)
			p.deadlines.edf.realized.record(0.5 * half) // every finished call within the bar
		}
		if f := p.deadlines.forecast; f != nil {
			f.late, f.seen = c.late, c.seen
		}
		st := stateOf(long)
		st.deadline, st.hasDeadline = v.Now.Seconds()+restOfService(v, long, st)+0.5, true
		p.deadlines.interval = 1 // a laxity under 1 s is promoted
		p.deadlines.fit = nil    // memory is not what this test is about
		if _, ok := p.deadlines.urgent(v, long, st); ok != c.want {
			t.Errorf("%s: promoted %v, want %v", c.name, ok, c.want)
		}
	}
}

// TestLaneForecastSlack: with slack, a call is promoted only while the
// prefill promoted in this re-rank and its own fit in the least slack of
// the in-time calls ranked ahead of it (the late ones ahead are not
// protected); without it, every call fits.
func TestLaneForecastSlack(t *testing.T) {
	a, b, late, x := &callState{}, &callState{}, &callState{}, &callState{}
	f := laneForecast{slack: true}
	f.note(100, forecastCall{class: 2, key: 1, prefill: 1, rest: 2, due: 110, st: a})    // ends 102: slack 8
	f.note(100, forecastCall{class: 2, key: 2, prefill: 2, rest: 2, due: 106, st: b})    // ends 103: slack 3
	f.note(100, forecastCall{class: 2, key: 3, prefill: 1, rest: 9, due: 105, st: late}) // ends 112: late, no slack counted
	f.note(100, forecastCall{class: 2, key: 4, prefill: 2, rest: 9, due: 108, st: x})    // ends 113: late
	f.roll()
	if a.slackAhead != math.Inf(1) || b.slackAhead != 8 || late.slackAhead != 3 || x.slackAhead != 3 {
		t.Fatalf("slack ahead: %v %v %v %v, want +Inf 8 3 3", a.slackAhead, b.slackAhead, late.slackAhead, x.slackAhead)
	}
	if !f.fitsSlack(x) { // its 2 s within b's 3
		t.Fatal("x: 2 s of prefill within 3 s of slack, want promoted")
	}
	if !f.fitsSlack(late) { // 2 spent + its 1 = 3, not past 3
		t.Fatal("late: 3 s within 3 s, want promoted")
	}
	if f.fitsSlack(&callState{slackAhead: 3, share: 0.5, forecastAt: 100}) {
		t.Fatal("3.5 s of prefill past 3 s of slack: want refused")
	}
	if !f.fitsSlack(&callState{}) {
		t.Fatal("a call no re-rank forecast: want it to fit")
	}
	f.roll()
	if f.spent != 0 {
		t.Fatal("a re-rank starts with nothing spent")
	}
	off := laneForecast{}
	if !off.fitsSlack(&callState{slackAhead: 0, share: 5, forecastAt: 1}) {
		t.Fatal("without slack every call fits")
	}
}
