package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// A tenant back after serve dropped its statistics (PitstopClassIdle)
// starts from the cold prior. TestClassReturnExperiment measures what that
// costs on mixed as three tenants (bench --classes family): one family's
// programs stop arriving for a pause longer than the program idle time and
// the class idle time, then come back. Two runs of the same arrivals, the
// class's statistics kept (class idle 0) and dropped (class idle 60 s),
// are compared from the tenant's return: how many of its calls until the
// order its calls are ranked in is the kept run's again, and the latency
// of its calls and of everyone's over that window. An experiment, not a
// test: set PITSTOP_CLASS_RETURN=DIR (JSON per case there);
// PITSTOP_CLASS_RETURN_CASES="family:rate:seed:from:to ..." (the pause in
// seconds; default react paused over [600, 1500) and chat, whose sessions
// last up to 37 min of think time, over [200, 1500), at 0.5 and 0.7, seed
// 1). The report says whether the family's statistics were dropped.
// PITSTOP_CLASS_RETURN_CLASSES sets --pitstop-classes (default: the
// default's).

// returnCall is one call of the run: its class, arrival and finish
// (engine time, seconds) and its class's program order at its arrival.
type returnCall struct {
	class           string
	arrival, finish float64
	order           string
}

// returnRecorder is pitstop with every call's arrival, finish and order
// at arrival recorded (embedding *Pitstop keeps every optional hook).
type returnRecorder struct {
	*policy.Pitstop
	calls   map[*engine.Sequence]*returnCall
	list    []*returnCall
	dropped map[string]bool // classes seen gone after having been kept
	seen    map[string]bool
}

func (r *returnRecorder) Observe(e *engine.Event) {
	r.Pitstop.Observe(e)
	switch e.Kind {
	case engine.EvArrived:
		class := e.Seq.Class()
		r.seen[class] = true
		c := &returnCall{class: class, arrival: e.Time.Seconds(), finish: math.NaN(), order: r.ClassOrder(class)}
		r.calls[e.Seq] = c
		r.list = append(r.list, c)
	case engine.EvFinished:
		if c := r.calls[e.Seq]; c != nil {
			c.finish = e.Time.Seconds()
			delete(r.calls, e.Seq)
		}
	case engine.EvIteration:
		kept := r.Classes()
		for class := range r.seen {
			if !slices.Contains(kept, class) {
				r.dropped[class] = true
			}
		}
	}
}

// familyOf is bench --classes family's class of a program.
func familyOf(p *workload.Program) string {
	if i := strings.LastIndexByte(p.ID, '-'); i > 0 {
		return p.ID[:i]
	}
	return p.ID
}

// pausedArrivals is mixed's Poisson arrivals as bench draws them
// (bench/driver.go), without family's programs arriving in [from, to).
func pausedArrivals(t *testing.T, seed int64, rate, duration float64, family string, from, to float64) *workload.Workload {
	w, err := workload.Load("mixed", seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0xa11))
	out := &workload.Workload{Name: "mixed-paused", Timestamped: true}
	for at := rng.ExpFloat64() / rate; at < duration; at += rng.ExpFloat64() / rate {
		p := w.Programs[rng.IntN(len(w.Programs))]
		if familyOf(&p) == family && at >= from && at < to {
			continue
		}
		p.Arrival = at
		out.Programs = append(out.Programs, p)
	}
	return out
}

// runReturn runs the paused arrivals under the default pitstop with the
// given class idle time and the serve predictor.
func runReturn(t *testing.T, w *workload.Workload, seed int64, classIdle float64) *returnRecorder {
	prof, err := sim.LoadProfile("a100-80g-llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	length, err := lengthPredictor("serve")
	if err != nil {
		t.Fatal(err)
	}
	o := policy.Options{PitstopClassIdle: classIdle, PitstopClasses: os.Getenv("PITSTOP_CLASS_RETURN_CLASSES")}
	pol, err := policy.New("pitstop", o) // the defaults, as bench's
	if err != nil {
		t.Fatal(err)
	}
	rec := &returnRecorder{Pitstop: pol.(*policy.Pitstop),
		calls: map[*engine.Sequence]*returnCall{}, dropped: map[string]bool{}, seen: map[string]bool{}}
	_, err = bench.Run(context.Background(), bench.RunConfig{Workload: w, Engine: prof.EngineConfig(), Executor: sim.NewExecutor(prof),
		Policy: rec, Name: "pitstop", Duration: 1800, Seed: seed, StopAfter: 5400 * time.Second,
		Predictors: splitPredictions(newPredictors(length, learnsOnline("serve")), "serve"), ClassOf: familyOf})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// latencies are the e2e latencies of the finished calls that pass keep.
func latencies(calls []*returnCall, keep func(*returnCall) bool) []float64 {
	var xs []float64
	for _, c := range calls {
		if keep(c) && !math.IsNaN(c.finish) {
			xs = append(xs, c.finish-c.arrival)
		}
	}
	slices.Sort(xs)
	return xs
}

// meanP99 of sorted xs.
func meanP99(xs []float64) (mean, p99 float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	return mean / float64(len(xs)), xs[min(int(math.Ceil(0.99*float64(len(xs))))-1, len(xs)-1)]
}

// returnResult is one case: kept against dropped from the family's
// return; Windows holds kept mean, kept p99, dropped mean, dropped p99
// (seconds) per window.
type returnResult struct {
	Family                string
	Rate                  float64
	Seed                  int64
	PauseFrom, PauseTo    float64
	Dropped               bool    // the dropped run saw the family's population go
	IdenticalBefore       bool    // every call finished before the return has the same latency in both runs
	ReturnAt              float64 // the family's first arrival at or after PauseTo
	OrderCallsKept        []string
	OrderCallsDrop        []string
	CallsUntilSameOrder   int     // the family's calls from the return until the orders agree from there on
	SecondsUntilSameOrder float64 // engine seconds from the return to that call
	Windows               map[string][4]float64
}

func TestClassReturnExperiment(t *testing.T) {
	dir := os.Getenv("PITSTOP_CLASS_RETURN")
	if dir == "" {
		t.Skip("an experiment: set PITSTOP_CLASS_RETURN=DIR")
	}
	cases := strings.Fields(os.Getenv("PITSTOP_CLASS_RETURN_CASES"))
	if len(cases) == 0 {
		cases = []string{"react:0.5:1:600:1500", "react:0.7:1:600:1500", "chat:0.5:1:200:1500", "chat:0.7:1:200:1500"}
	}
	const classIdle = 60.0
	for _, cs := range cases {
		parts := strings.Split(cs, ":")
		family := parts[0]
		rate, _ := strconv.ParseFloat(parts[1], 64)
		seed, _ := strconv.ParseInt(parts[2], 10, 64)
		from, _ := strconv.ParseFloat(parts[3], 64)
		to, _ := strconv.ParseFloat(parts[4], 64)
		w := pausedArrivals(t, seed, rate, 1800, family, from, to)
		kept := runReturn(t, w, seed, 0)
		drop := runReturn(t, w, seed, classIdle)
		res := returnResult{Family: family, Rate: rate, Seed: seed, PauseFrom: from, PauseTo: to, Dropped: drop.dropped[family] && !kept.dropped[family],
			Windows: map[string][4]float64{}}
		res.ReturnAt = math.Inf(1)
		shift := w.Programs[0].Arrival // the run's clock starts at the first arrival
		for _, c := range kept.list {
			if c.class == family && c.arrival >= to-shift {
				res.ReturnAt = min(res.ReturnAt, c.arrival)
			}
		}
		// Calls done before the return: nothing of the return reached them.
		before := func(c *returnCall) bool { return c.finish < res.ReturnAt }
		res.IdenticalBefore = slices.Equal(latencies(kept.list, before), latencies(drop.list, before))
		// The family's orders from the return, call by call (arrival order).
		orders := func(r *returnRecorder) (os []string, at []float64) {
			for _, c := range r.list {
				if c.class == family && c.arrival >= res.ReturnAt {
					os, at = append(os, c.order), append(at, c.arrival)
				}
			}
			return os, at
		}
		ko, _ := orders(kept)
		do, dat := orders(drop)
		n := min(len(ko), len(do))
		last := -1
		for i := range n {
			if ko[i] != do[i] {
				last = i
			}
		}
		res.CallsUntilSameOrder = last + 1
		if last+1 < len(dat) {
			res.SecondsUntilSameOrder = dat[last+1] - res.ReturnAt
		}
		res.OrderCallsKept, res.OrderCallsDrop = summarize(ko), summarize(do)
		end := res.ReturnAt + res.SecondsUntilSameOrder
		windows := []struct {
			name string
			keep func(*returnCall) bool
		}{
			{"family, warm-up window", func(c *returnCall) bool { return c.class == family && c.arrival >= res.ReturnAt && c.arrival < end }},
			{"everyone, warm-up window", func(c *returnCall) bool { return c.arrival >= res.ReturnAt && c.arrival < end }},
			{"family, after the return", func(c *returnCall) bool { return c.class == family && c.arrival >= res.ReturnAt }},
			{"everyone, after the return", func(c *returnCall) bool { return c.arrival >= res.ReturnAt }},
			{"everyone, whole run", func(*returnCall) bool { return true }},
		}
		for _, win := range windows {
			kl, dl := latencies(kept.list, win.keep), latencies(drop.list, win.keep)
			km, kp := meanP99(kl)
			dm, dp := meanP99(dl)
			if len(kl) > 0 && len(dl) > 0 { // JSON has no NaN
				res.Windows[win.name] = [4]float64{km, kp, dm, dp}
			}
			t.Logf("%s @%g s%d %-28s calls %5d/%5d  mean %.3f → %.3f (%+.1f %%)  p99 %.2f → %.2f (%+.1f %%)", family, rate, seed, win.name,
				len(kl), len(dl), km, dm, 100*(dm/km-1), kp, dp, 100*(dp/kp-1))
		}
		t.Logf("%s @%g s%d: dropped %v, identical before the return %v, return at %.1f s, %d calls (%.1f s) until its order is the kept run's; kept %v, dropped %v",
			family, rate, seed, res.Dropped, res.IdenticalBefore, res.ReturnAt, res.CallsUntilSameOrder, res.SecondsUntilSameOrder, res.OrderCallsKept, res.OrderCallsDrop)
		data, err := json.MarshalIndent(res, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("return-%s-r%g-s%d%s.json", family, rate, seed, os.Getenv("PITSTOP_CLASS_RETURN_CLASSES"))), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// summarize is a run-length summary of orders: "queues×12 call×300".
func summarize(orders []string) []string {
	var out []string
	for i := 0; i < len(orders); {
		j := i
		for j < len(orders) && orders[j] == orders[i] {
			j++
		}
		out = append(out, fmt.Sprintf("%s×%d", orders[i], j-i))
		i = j
	}
	return out
}
