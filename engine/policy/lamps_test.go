package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// call is a hand-made call for ordering tests.
type call struct {
	name        string
	prompt      int
	truth, pred []seg
}

func TestMemoryOverTimeOrdering(t *testing.T) {
	cases := []struct {
		name  string
		calls []call
		want  map[string][]string // policy → order
	}{
		{
			name: "shorter output first",
			calls: []call{
				{name: "long", prompt: 20, truth: []seg{{decode: 60}}},
				{name: "short", prompt: 20, truth: []seg{{decode: 5}}},
			},
			want: map[string][]string{"lamps": {"short", "long"}, "pitstop": {"short", "long"}, "srpt": {"short", "long"}},
		},
		{
			name: "smaller context first at equal output",
			calls: []call{
				{name: "big", prompt: 120, truth: []seg{{decode: 10}}},
				{name: "small", prompt: 10, truth: []seg{{decode: 10}}},
			},
			want: map[string][]string{"lamps": {"small", "big"}, "pitstop": {"small", "big"}},
		},
		{
			name: "a tool and output after it cost memory",
			calls: []call{
				{name: "tool", prompt: 20, truth: []seg{{decode: 10, tool: 2, ret: 8}, {decode: 30}}},
				{name: "plain", prompt: 20, truth: []seg{{decode: 10}}},
			},
			want: map[string][]string{"lamps": {"plain", "tool"}, "pitstop": {"plain", "tool"}, "srpt": {"plain", "tool"}},
		},
		{
			name: "predictions, not the truth (srpt reads the truth)",
			calls: []call{
				{name: "truly-short", prompt: 20, truth: []seg{{decode: 5}}, pred: []seg{{decode: 80}}},
				{name: "truly-long", prompt: 20, truth: []seg{{decode: 80}}, pred: []seg{{decode: 5}}},
			},
			want: map[string][]string{
				"lamps":   {"truly-long", "truly-short"},
				"pitstop": {"truly-long", "truly-short"},
				"srpt":    {"truly-short", "truly-long"},
			},
		},
	}
	for _, tc := range cases {
		for pol, want := range tc.want {
			t.Run(tc.name+"/"+pol, func(t *testing.T) {
				p, err := New(pol, Options{})
				if err != nil {
					t.Fatal(err)
				}
				h := newHarness(t, p, testConfig())
				var seqs []*engine.Sequence
				for i, c := range tc.calls {
					seqs = append(seqs, h.submit(c.name, "prog-"+c.name, "main", c.prompt+i, c.truth, c.pred))
				}
				if got := order(p, h.view(0, 1), seqs...); !slices.Equal(got, want) {
					t.Fatalf("order %v, want %v", got, want)
				}
			})
		}
	}
}

// TestLAMPSClasses: running calls first (FCFS), then a starving waiting
// call, then the other waiting calls by score.
func TestLAMPSClasses(t *testing.T) {
	p := NewLAMPS(Options{})
	h := newHarness(t, p, testConfig())
	h.submit("early-long", "a", "main", 20, []seg{{decode: 200}}, nil)
	h.run(untilIteration(3)) // early-long is running
	late := h.submit("late-short", "b", "main", 20, []seg{{decode: 3}}, nil)
	mid := h.submit("mid", "c", "main", 20, []seg{{decode: 50}}, nil)
	running := h.seqs["early-long"]
	if running.State() != engine.Running {
		t.Fatalf("early-long is %v", running.State())
	}
	v := h.view(h.e.Now(), 4)
	if got, want := order(p, v, late, mid, running), []string{"early-long", "late-short", "mid"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	// 150 iterations later without running, both waiting calls starve: they
	// keep their score order among themselves but stay behind running calls.
	v = h.view(h.e.Now()+time.Second, 4+150)
	if got, want := order(p, v, mid, late, running), []string{"early-long", "late-short", "mid"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if pr := p.Priority(v, mid); pr.Class != 2 {
		t.Fatalf("starving waiting call has class %v, want 2", pr.Class)
	}
}

// TestLAMPSHandlingIsPredicted: the handling is chosen from the predicted
// tool time and applied at the tool call, whatever the truth.
func TestLAMPSHandlingIsPredicted(t *testing.T) {
	cases := []struct {
		name       string
		truth      float64
		pred       float64
		wantKeep   bool // preserve
		wantChange bool
	}{
		{name: "short tool preserved", truth: 0.01, pred: 0.01, wantKeep: true},
		{name: "long tool released", truth: 30, pred: 30, wantKeep: false},
		{name: "predicted long, truly short: released", truth: 0.01, pred: 30, wantKeep: false},
		{name: "predicted short, truly long: preserved", truth: 30, pred: 0.01, wantKeep: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := NewLAMPS(Options{})
			h := newHarness(t, p, testConfig())
			h.submit("c", "p", "main", 40, []seg{{decode: 8, tool: tc.truth, ret: 4}, {decode: 4}},
				[]seg{{decode: 8, tool: tc.pred, ret: 4}, {decode: 4}})
			h.run(nil)
			got := h.paused["c"]
			if len(got) != 1 {
				t.Fatalf("paused %d times", len(got))
			}
			if (got[0] == handling.Preserve) != tc.wantKeep {
				t.Fatalf("handling %v, want preserve=%v", got[0], tc.wantKeep)
			}
			if len(h.later["c"]) != 0 {
				t.Fatalf("LAMPS revised its handling while the call waited: %v", h.later["c"])
			}
		})
	}
}

// TestStarvationIsFound: a call kept out by running calls is found starving
// by the amortized tracker (no scan of all calls) and re-ranked.
func TestStarvationIsFound(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSeqs = 1 // one call at a time: the second waits
	p := NewLAMPS(Options{StarvationThreshold: 20, StarvationCheck: 1})
	h := newHarness(t, p, cfg)
	h.submit("first", "a", "main", 8, []seg{{decode: 60}}, nil)
	h.run(untilIteration(2))
	w := h.submit("waiter", "b", "main", 8, []seg{{decode: 2}}, nil)
	h.run(untilIteration(30))
	if !stateOf(w).starved {
		t.Fatal("a call that waited 30 iterations with threshold 20 is not marked starving")
	}
}
