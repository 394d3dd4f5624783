package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestWarmAge: with PitstopTail "aging+warm" the next call of a program,
// whose context the previous call left in the prefix cache, is aged from
// its program's first arrival; a call of the same program that finds
// nothing cached, and every call under the default aging, from its own.
func TestWarmAge(t *testing.T) {
	for _, tail := range []string{"aging", "aging+warm"} {
		o := Options{PitstopTail: tail}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		p := NewPitstop(o)
		h := newHarness(t, p, testConfig())
		a := h.submit("a", "pa", "main", 40, []seg{{decode: 4}}, nil)
		h.run(nil)
		prompt := append([]int32(nil), a.Tokens()...)
		prompt = append(prompt, 7, 8, 9) // the tool's result
		next, err := h.e.SubmitNow(engine.Request{Name: "next", Program: "pa", Thread: "main", Prompt: prompt, Controller: &ctl{truth: []seg{{decode: 4}}}})
		if err != nil {
			t.Fatal(err)
		}
		cold := h.submit("cold", "pa", "main", 40, []seg{{decode: 4}}, nil)
		v := h.e.View()
		p.Priority(&v, next) // scores them: their cached prefixes
		p.Priority(&v, cold)
		progAge := v.Now - a.Arrival()
		own := v.Now - next.Arrival()
		if progAge <= own {
			t.Fatalf("the test needs the program to be older than its next call: now %v, program from %v, next from %v", v.Now, a.Arrival(), next.Arrival())
		}
		if stateOf(next).scoreFor.cached == 0 || stateOf(cold).scoreFor.cached != 0 {
			t.Fatalf("cached prefixes %d (next) and %d (cold), want >0 and 0", stateOf(next).scoreFor.cached, stateOf(cold).scoreFor.cached)
		}
		wantNext := own
		if tail == "aging+warm" {
			wantNext = progAge
		}
		if got := p.ageOf(&v, next); got != wantNext {
			t.Errorf("%s: warm next call aged %v, want %v", tail, got, wantNext)
		}
		if got, want := p.ageOf(&v, cold), v.Now-cold.Arrival(); got != want {
			t.Errorf("%s: cold call aged %v, want its own age %v", tail, got, want)
		}
	}
}
