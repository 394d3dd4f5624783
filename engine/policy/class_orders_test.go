package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// ordersMovedSlow is ordersMoved the way it was before the cache: every
// class asked for its order.
func (p *Pitstop) ordersMovedSlow() (moved, drifting bool) {
	pops := p.pops.list
	if len(pops) == 0 {
		pops = []*population{&p.pops.cold}
	}
	for _, pop := range pops {
		ord := p.orderOf(pop)
		moved = moved || ord != pop.lastOrder
		drifting = drifting || drifts(ord)
	}
	return moved, drifting
}

// slowChecked is pitstop with every Refresh's cached answer checked
// against asking every class.
type slowChecked struct {
	*Pitstop
	t      *testing.T
	checks int
	// priorities counts the calls ranked with their class known.
	priorities int
	lastC0     programOrder // class c0's order at the last Refresh
	c0Changes  int          // how often it changed
}

func (c *slowChecked) Refresh(v *engine.View) bool {
	m, d := c.ordersMoved()
	sm, sd := c.ordersMovedSlow()
	if m != sm || d != sd {
		c.t.Fatalf("iteration %d, %d classes: cached (moved %v, drifting %v), every class asked (%v, %v)",
			v.Iteration, len(c.pops.list), m, d, sm, sd)
	}
	if len(c.pops.list) > 0 {
		moved, drifting := 0, 0
		for _, pop := range c.pops.list {
			if ord := c.orderOf(pop); ord != pop.lastOrder {
				moved++
			}
			if drifts(c.orderOf(pop)) {
				drifting++
			}
		}
		if moved != c.pops.stale.moved || drifting != c.pops.stale.drifting {
			c.t.Fatalf("iteration %d: cached counts moved %d, drifting %d; counted %d, %d",
				v.Iteration, c.pops.stale.moved, c.pops.stale.drifting, moved, drifting)
		}
	}
	c.checks++
	if c0 := c.pops.byClass["c0"]; c0 != nil {
		o := c.orderOf(c0)
		if o != c.lastC0 {
			c.c0Changes++
		}

		c.lastC0 = o
	}
	return c.Pitstop.Refresh(v)
}

// Priority checks that the order the call is ranked by (orderNow, the
// cache) is the one asking its class gives.
func (c *slowChecked) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	if pop := stateOf(s).pop; pop != nil {
		if got, want := c.orderNow(pop), c.orderOf(pop); got != want {
			c.t.Fatalf("iteration %d, class %q: ranked in order %d, its class's order is %d", v.Iteration, pop.class, got, want)
		}
		c.priorities++
	}
	return c.Pitstop.Priority(v, s)
}

// manyClasses runs 60 classes' programs on one engine, each class its own
// shape (single calls, chains of tool calls, two-thread DAGs; some long),
// arriving in bursts with idle stretches between so that classes go busy
// and idle, the number of busy classes passes through 0, 1 and 2 (a
// class of DAGs alone in the engine, then joined: its arrival order ends), and
// sweeps complete programs into models that become ready.
func manyClasses(t *testing.T, classes string, classIdle float64, check bool) (*Pitstop, *slowChecked) {
	p := NewPitstop(Options{ProgramIdle: 0.5, PitstopClasses: classes, PitstopClassIdle: classIdle})
	c := &slowChecked{Pitstop: p, t: t}
	var pol engine.Policy = p
	if check {
		pol = c
	}
	h := newHarness(t, pol, testConfig())
	rng := rand.New(rand.NewPCG(16, 1))
	n := 0
	for burst := range 12 {
		base := time.Duration(burst) * 30 * time.Second
		for k := range 20 {
			at := base + time.Duration(rng.IntN(1500))*time.Millisecond
			class := fmt.Sprint("c", rng.IntN(60))
			if burst%4 == 3 && k < 10 {
				class = "c0" // a burst of one class, alone until the others come
				at = base + time.Duration(k)*20*time.Millisecond
			} else if burst%4 == 3 {
				at += 2 * time.Second
			}
			shape := rng.IntN(3)
			if class == "c0" {
				shape = 2 // tree searches alike: arrival order while alone
			}
			decode := 4 + rng.IntN(12)
			if rng.IntN(4) == 0 {
				decode *= 30
			}
			if class == "c0" {
				decode = 6
			}
			id := fmt.Sprint("p", burst, "-", k)
			n++
			h.e.At(at, func() {
				switch shape {
				case 0: // one call
					h.submitIn(class, id, id, "main", 8, []seg{{decode: decode}}, nil)
				case 1: // a chain: a call with two tools
					h.submitIn(class, id, id, "main", 8, []seg{{decode: decode, tool: 0.2, ret: 4}, {decode: 4, tool: 0.1, ret: 4}, {decode: decode}}, nil)
				default: // a DAG: two threads at once
					for _, th := range []string{"t1", "t2"} {
						h.submitIn(class, id+th, id, th, 8, []seg{{decode: decode}}, nil)
					}
				}
			})
		}
	}
	h.run(nil)
	return p, c
}

// The cached orders answer Refresh exactly as asking every class does, at
// every iteration of a run with many classes, under each classes option,
// and with idle classes dropped between bursts (class_lifetime.go).
func TestClassOrdersMatchSlow(t *testing.T) {
	for _, classes := range []string{"class-shared", "class", "pooled", "class-shared+drop", "class-alone"} {
		t.Run(classes, func(t *testing.T) {
			classIdle := 0.0
			if classes == "class-shared+drop" {
				classes, classIdle = "class-shared", 5
			}
			p, c := manyClasses(t, classes, classIdle, true)
			if c.checks < 1000 || c.priorities < 1000 {
				t.Errorf("%d refreshes and %d priorities checked: the run is too short to test the cache", c.checks, c.priorities)
			}
			ready := 0
			for _, pop := range p.pops.list {
				if pop.model.ready() {
					ready++
				}
			}
			if classIdle > 0 {
				if len(p.pops.list) > 25 {
					t.Errorf("%d classes kept after the last burst: none dropped", len(p.pops.list))
				}
			} else if classes != "pooled" && (len(p.pops.list) < 50 || ready == 0) {
				t.Errorf("%d classes, %d models ready: the run does not exercise the cache", len(p.pops.list), ready)
			}
			if classes == "class-shared" && c.c0Changes < 2 {
				t.Errorf("class c0's order changed %d times: the run never ends its arrival order alone", c.c0Changes)
			}
		})
	}
}
