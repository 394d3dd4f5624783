package bench

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

func TestToolPathIsTheLongestChainOfToolAndThinkTime(t *testing.T) {
	w := dagWorkload()
	// root's tool 0.5, then a's tool 1 (b has none), then join's think 0.2.
	if got := toolPath(&w.Programs[0]); math.Abs(got-1.7) > 1e-9 {
		t.Fatalf("tool path %g, want 1.7", got)
	}
}

func tinySearch(t *testing.T) *SustainedSearch {
	t.Helper()
	w := dagWorkload()
	prof, cfg := smallProfile(t, 256)
	return &SustainedSearch{
		Rule:     SustainedRule{Window: 60, Warmup: 10, Drain: 20, MinThroughput: 0.98},
		Policies: []string{"fcfs", "pitstop"}, Seeds: []int64{1, 2},
		Start: 4, Resolution: 2, MaxRate: 1024, Parallel: 2,
		NewRun: func(name string, rate float64, seed int64) (RunConfig, error) {
			pol, err := policy.New(name, policy.Options{})
			return RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof), Policy: pol, Name: name}, err
		},
	}
}

func TestSustainedTrialJudgesLightAndOverload(t *testing.T) {
	s := tinySearch(t)
	light, err := s.NewRun("fcfs", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	light.Rate, light.Seed = 1, 1
	tr, err := s.Rule.Trial(context.Background(), light)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Sustained || tr.Run.Stopped() || tr.ThroughputRatio < 0.98 {
		t.Fatalf("rate 1 on a tiny program: %+v, want sustained", tr)
	}
	heavy, _ := s.NewRun("fcfs", 0, 1)
	heavy.Rate, heavy.Seed = 200, 1
	tr, err = s.Rule.Trial(context.Background(), heavy)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Sustained || tr.Reason == "" || !tr.Run.Stopped() {
		t.Fatalf("rate 200: %+v, want not sustained and stopped", tr)
	}
	// The verdict is known at the first finish after the window: the run
	// stops there, not at window + drain + tool path.
	if limit := s.Rule.Window + s.Rule.Drain; tr.Run.StoppedAtS >= limit {
		t.Fatalf("overloaded trial ran to %g s (ratio %g, %s); the throughput verdict is known after %g s", tr.Run.StoppedAtS, tr.ThroughputRatio, tr.Reason, s.Rule.Window)
	}
	s.Rule.P99E2E = 1e-6
	light, _ = s.NewRun("fcfs", 0, 1)
	light.Rate, light.Seed = 1, 1
	if tr, err = s.Rule.Trial(context.Background(), light); err != nil || tr.Sustained || !strings.HasPrefix(tr.Reason, "latency") {
		t.Fatalf("with an unreachable p99 target: %+v, %v; want a latency failure", tr, err)
	}
}

func TestSustainedSearchBracketsTheRate(t *testing.T) {
	s := tinySearch(t)
	var log bytes.Buffer
	s.Log = &log
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d policies, want 2", len(res))
	}
	for _, p := range res {
		if len(p.Seeds) != 2 {
			t.Fatalf("%s: %d seeds", p.Policy, len(p.Seeds))
		}
		for _, sd := range p.Seeds {
			if !(sd.SustainedRate > 0) || !(sd.Unsustained > sd.SustainedRate) || sd.Unsustained-sd.SustainedRate > s.Resolution {
				t.Fatalf("%s seed %d: sustained %g, unsustained %g: not bracketed to %g", p.Policy, sd.Seed, sd.SustainedRate, sd.Unsustained, s.Resolution)
			}
			at := sd.AtRate()
			if at == nil || !at.Sustained {
				t.Fatalf("%s seed %d: no sustained trial at %g", p.Policy, sd.Seed, sd.SustainedRate)
			}
			for _, tr := range sd.Trials {
				if tr.Rate == sd.Unsustained && tr.Sustained {
					t.Fatalf("%s seed %d: the unsustained end %g was sustained", p.Policy, sd.Seed, tr.Rate)
				}
			}
		}
		if p.SustainedRateMin > p.SustainedRate || p.SustainedRate > p.SustainedRateMax {
			t.Fatalf("%s: mean %g outside [%g, %g]", p.Policy, p.SustainedRate, p.SustainedRateMin, p.SustainedRateMax)
		}
	}
	if !strings.Contains(log.String(), "NOT sustained") {
		t.Fatalf("log has no failed trial:\n%s", log.String())
	}
	rep := &SustainedReport{Workload: "dag", Profile: "small", WindowS: 60, DrainS: 20, Policies: res}
	var tab bytes.Buffer
	SustainedRows(&tab, rep)
	if !strings.Contains(tab.String(), "pitstop") || !strings.Contains(tab.String(), "sustained_rate") {
		t.Fatalf("table:\n%s", tab.String())
	}
	dir := t.TempDir()
	if err := WriteSustainedJSON(filepath.Join(dir, "s.json"), rep); err != nil {
		t.Fatal(err)
	}
	if _, err := PlotSustained(dir, rep); err != nil {
		t.Fatal(err)
	}
}

func TestSustainedSearchRejectsBadInput(t *testing.T) {
	for name, mod := range map[string]func(*SustainedSearch){
		"no seeds":        func(s *SustainedSearch) { s.Seeds = nil },
		"zero resolution": func(s *SustainedSearch) { s.Resolution = 0 },
		"max below start": func(s *SustainedSearch) { s.MaxRate = 1 },
		"warm-up >= window": func(s *SustainedSearch) {
			s.Rule.Warmup = s.Rule.Window
		},
		"throughput > 1": func(s *SustainedSearch) { s.Rule.MinThroughput = 1.5 },
		"negative z":     func(s *SustainedSearch) { s.Rule.Z = -1 },
		"NaN z":          func(s *SustainedSearch) { s.Rule.Z = math.NaN() },
		"infinite z":     func(s *SustainedSearch) { s.Rule.Z = math.Inf(1) },
	} {
		s := tinySearch(t)
		mod(s)
		if _, err := s.Run(context.Background()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The throughput test counts by arrival: a steady mix of short and long
// programs reads as keeping up, a delay that grows through the window does not.
func TestJudgeThroughputByArrival(t *testing.T) {
	rule := SustainedRule{Window: 1000, Warmup: 100, Drain: 500, MinThroughput: 0.98}
	short := &workload.Program{Calls: []workload.Call{{ID: "a", Segments: []workload.Segment{{Decode: 1}}}}}
	long := &workload.Program{Calls: []workload.Call{{ID: "a", Segments: []workload.Segment{{Decode: 1, ToolTime: 50}, {Decode: 1}}}}}
	steady := func(delay func(at float64, long bool) float64) float64 {
		j := &judge{rule: rule}
		type fin struct {
			p         *workload.Program
			at, until float64
		}
		var fins []fin
		for i := range 1000 {
			at := float64(i)
			p, isLong := short, i%3 == 0
			if isLong {
				p = long
			}
			j.arrivals = append(j.arrivals, dueProgram{seconds(at), toolPath(p)})
			fins = append(fins, fin{p, at, at + toolPath(p) + delay(at, isLong)})
		}
		slices.SortFunc(fins, func(a, b fin) int { return cmp.Compare(a.until, b.until) })
		for _, f := range fins {
			j.programDone(f.p, seconds(f.at), seconds(f.until))
		}
		return j.throughput(seconds(rule.Window)).ratio()
	}
	if r := steady(func(_ float64, long bool) float64 {
		if long {
			return 120 // long programs also wait longer
		}
		return 2
	}); r < 0.98 {
		t.Fatalf("a steady mix reads %.3f, want >= 0.98", r)
	}
	if r := steady(func(at float64, _ bool) float64 { return 0.1 * at }); r >= 0.98 {
		t.Fatalf("a growing delay reads %.3f, want < 0.98", r)
	}
}

// judgeOf tallies a judge over programs arriving every gap seconds through
// rule's window, the i-th finishing latency(i, at) seconds after it arrived.
func judgeOf(rule SustainedRule, n int, gap float64, latency func(i int, at float64) float64) throughputCount {
	p := &workload.Program{Calls: []workload.Call{{ID: "a", Segments: []workload.Segment{{Decode: 1}}}}}
	j := &judge{rule: rule}
	type fin struct{ at, until float64 }
	var fins []fin
	for i := range n {
		at := float64(i) * gap
		j.arrivals = append(j.arrivals, dueProgram{seconds(at), 0})
		fins = append(fins, fin{at, at + latency(i, at)})
	}
	slices.SortFunc(fins, func(a, b fin) int { return cmp.Compare(a.until, b.until) })
	for _, f := range fins {
		j.programDone(p, seconds(f.at), seconds(f.until))
	}
	return j.throughput(seconds(rule.Window))
}

// At light load a few long programs straddle the window's end, and which
// of them happen to arrive late moves done/due by more than the 2 % the bar
// allows: such a run passes with the confidence bound and fails the bare
// ratio. A backlog that grows fails either way, with many programs too.
func TestThroughputBoundSeparatesStraddlersFromBacklog(t *testing.T) {
	rule := SustainedRule{Window: 1000, Warmup: 100, Drain: 1000, MinThroughput: 0.98, Z: DefaultZ}
	// One program every 5 s; a quarter of them take 400 s, the rest 2 s, but
	// of the last 80 arrivals (those that straddle the end) 3 in 8 are long:
	// the same steady latencies, drawn unluckily for the window's end.
	unlucky := func(i int, at float64) float64 {
		long := i%4 == 0
		if at > rule.Window-400 {
			long = i%8 < 3
		}
		if long {
			return 400
		}
		return 2
	}
	c := judgeOf(rule, 200, 5, unlucky)
	if r := c.ratio(); r >= rule.MinThroughput {
		t.Fatalf("unlucky straddlers read %.3f of due: the case does not test the bound", r)
	}
	if c.short(rule.MinThroughput, rule.Z) {
		t.Fatalf("steady run with unlucky straddlers: done %d of %.1f due (sd %.2f) fails z = %g", c.done, c.due, c.sd(), rule.Z)
	}
	if !c.short(rule.MinThroughput, 0) {
		t.Fatalf("done %d of %.1f due passes the bare ratio: the case does not test the bound", c.done, c.due)
	}
	// A backlog growing by 5 % of each program's arrival time, 20,000
	// programs: the shortfall grows with n, the steady sd only with √n.
	rule.Window = 2000
	c = judgeOf(rule, 20000, 0.1, func(_ int, at float64) float64 { return 1 + 0.05*at })
	if !c.short(rule.MinThroughput, rule.Z) {
		t.Fatalf("growing backlog: done %d of %.1f due (%.3f, sd %.2f) passes z = %g", c.done, c.due, c.ratio(), c.sd(), rule.Z)
	}
	// The same arrivals in a steady state (latency independent of arrival)
	// pass.
	c = judgeOf(rule, 20000, 0.1, func(i int, _ float64) float64 { return float64(1 + i%60) })
	if c.short(rule.MinThroughput, rule.Z) {
		t.Fatalf("steady state: done %d of %.1f due (%.3f, sd %.2f) fails z = %g", c.done, c.due, c.ratio(), c.sd(), rule.Z)
	}
}

// The searches' trials become one run per series and rate: latencies are
// the means over the seeds that tried the rate (p95 too), a stopped trial stops its
// rate, and the series keeps its policy and balancer.
func TestSustainedTrialsReport(t *testing.T) {
	trial := func(rate, e2e, p99 float64, stopped bool) SustainedTrial {
		r := report.Run{Policy: "plas", Balancer: "pitstop", Rate: rate, E2EMeanS: e2e, E2EP95S: p99 / 2, E2EP99S: p99}
		if stopped {
			r.StoppedAtS = 100
		}
		return SustainedTrial{Rate: rate, Sustained: !stopped, Run: r}
	}
	rep := &SustainedReport{Workload: "chat", Replicas: 4, WindowS: 100, Policies: []SustainedPolicy{{Policy: "plas/pitstop", Seeds: []SustainedSeed{
		{Seed: 1, Trials: []SustainedTrial{trial(2, 10, 50, false), trial(4, 99, 999, true), trial(1, 4, 20, false)}},
		{Seed: 2, Trials: []SustainedTrial{trial(2, 20, 70, false), trial(3, 30, 90, false)}},
	}}}}
	got := SustainedTrialsReport(rep)
	want := []struct {
		rate, e2e, p99 float64
		stopped        bool
	}{{1, 4, 20, false}, {2, 15, 60, false}, {3, 30, 90, false}, {4, 99, 999, true}}
	if len(got.Runs) != len(want) {
		t.Fatalf("%d runs, want %d: %+v", len(got.Runs), len(want), got.Runs)
	}
	for i, w := range want {
		r := got.Runs[i]
		if r.Rate != w.rate || r.E2EMeanS != w.e2e || r.E2EP95S != w.p99/2 || r.E2EP99S != w.p99 || r.Stopped() != w.stopped || r.Series() != "plas/pitstop" || r.Replicas != 4 {
			t.Fatalf("run %d: %+v, want %+v", i, r, w)
		}
	}
	if _, err := report.Plot(t.TempDir(), got); err != nil {
		t.Fatal(err)
	}
}
