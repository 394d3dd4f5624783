package policy

import (
	"testing"
	"time"
)

// TestPitstopProgramLead: programs in arrival order, one slot. An old
// program's long call holds the slot; a young program's call arrives at
// 0.5 s and waits; the old program releases a burst of two branches at
// 1.5 s. (Admission "" is the default, "started".) In arrival order of
// programs (lead off, or a lead longer than the
// 1 s between the two arrivals) the burst goes first; with a lead of 0.5 s
// the young call, which arrived more than the lead before the burst, goes
// first. With admission "started" the young call, its program's first, goes
// after the started program's calls whatever the lead. The burst's siblings,
// arriving together, share one rank either way. The tail is "aging+warm":
// the default's deadline lane promotes by its own deadlines, not the lead.
func TestPitstopProgramLead(t *testing.T) {
	for _, c := range []struct {
		lead, admission string
		youngFirst      bool
	}{{"", "", false}, {"off", "", false}, {"2", "", false}, {"0.5", "off", true}, {"0", "off", true},
		{"0", "started", false}, {"", "started", false}} {
		p := NewPitstop(Options{ProgramOrder: "arrival", PitstopProgramLead: c.lead, PitstopAdmission: c.admission, PitstopTail: "aging+warm"})
		cfg := testConfig()
		cfg.MaxSeqs = 1
		h := newHarness(t, p, cfg)
		h.submit("old/a", "old", "main", 8, []seg{{decode: 300}}, nil)
		h.e.At(500*time.Millisecond, func() { h.submit("young/a", "young", "main", 8, []seg{{decode: 4}}, nil) })
		h.e.At(1500*time.Millisecond, func() {
			h.submit("old/b0", "old", "b0", 8, []seg{{decode: 4}}, nil)
			h.submit("old/b1", "old", "b1", 8, []seg{{decode: 4}}, nil)
		})
		var ranks []float64
		h.e.At(1600*time.Millisecond, func() {
			v := h.view(h.e.Now(), 0)
			for _, n := range []string{"young/a", "old/b0", "old/b1"} {
				ranks = append(ranks, p.Priority(v, h.seqs[n]).Class)
			}
		})
		h.run(nil)
		young, burst := h.done["young/a"], min(h.done["old/b0"], h.done["old/b1"])
		if got := young < burst; got != c.youngFirst {
			t.Errorf("lead %q, admission %q: young call done at %v, the burst's first at %v; want young first %v", c.lead, c.admission, young, burst, c.youngFirst)
		}
		if len(ranks) != 3 || ranks[1] != ranks[2] {
			t.Errorf("lead %q: burst siblings ranked in classes %v, want one rank", c.lead, ranks)
		}
	}
}

// "auto" ranks by the program's arrival until arrival order's p99 is known,
// and by the learned p99 as the lead from then on.
func TestPitstopProgramLeadAuto(t *testing.T) {
	p := NewPitstop(Options{ProgramOrder: "arrival", PitstopProgramLead: "auto"})
	h := newHarness(t, p, testConfig())
	s := h.submit("a", "prog", "main", 8, []seg{{decode: 4}}, nil)
	if got := p.lead.arrival(s, -100, &p.fcfs); got != -100 {
		t.Fatalf("reference unknown: ranked at %v s, want the program's arrival -100", got)
	}
	h.run(nil)
	for i := range fcfsMinCalls {
		h.submit("c"+string(rune('a'+i)), "prog", "main", 8, []seg{{decode: 4}}, nil)
	}
	h.run(nil)
	lead, ok := p.fcfs.bound(0)
	if !ok || lead <= 0 {
		t.Fatalf("the reference is not known after %d finished calls (%v, %v)", fcfsMinCalls+1, lead, ok)
	}
	want := s.Arrival().Seconds() - lead
	if got := p.lead.arrival(s, -100, &p.fcfs); got != want {
		t.Fatalf("reference known: ranked at %v s, want own arrival less the learned p99 %v", got, want)
	}
}

func TestProgramLeadOption(t *testing.T) {
	for _, bad := range []string{"-1", "soon", "NaN", "+Inf"} {
		if err := (Options{PitstopProgramLead: bad}).Validate(); err == nil {
			t.Errorf("lead %q accepted", bad)
		}
	}
	if err := (Options{PitstopAdmission: "later"}).Validate(); err == nil {
		t.Errorf("admission %q accepted", "later")
	}
	for _, good := range []string{"", "off", "auto", "0", "12.5"} {
		if err := (Options{PitstopProgramLead: good}).Validate(); err != nil {
			t.Errorf("lead %q: %v", good, err)
		}
	}
}
