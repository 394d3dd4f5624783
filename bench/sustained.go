package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
)

// SustainedRule is what a run must show to count as sustaining its arrival
// rate (issue 12): a 600 s window hides a backlog that grows slowly, so the
// rule looks at the completions after a warm-up and at the drain after the
// window.
//
//   - Throughput: of the programs that arrived after Warmup, those finished
//     by the window's end are at least MinThroughput of those due by then,
//     up to the spread a steady state has: a program that arrived at a is
//     due with probability p_a = F(Window − a), F the run's distribution of
//     program latency (over the programs that arrived after the warm-up, all
//     finished once the run drained). A program's own length (a chat of
//     twenty turns with human think times takes minutes unloaded) thus does
//     not read as lost throughput; when the backlog grows, late arrivals
//     wait longer than the run's pooled latencies say, fall behind, and the
//     done count falls. In a steady state the done count is a sum of
//     independent Bernoulli(p_a): mean due = Σ p_a, variance Σ p_a(1 − p_a)
//     (Poisson-binomial), carried by the programs that straddle the
//     window's end. The run fails only when done < MinThroughput·due −
//     Z·sd, sd the square root of that variance: a one-sided bound, so the
//     straddlers' luck (which long programs happen to arrive late) does not
//     decide the verdict at light load, while a growing backlog, whose
//     shortfall grows with the number of programs and sd only with its
//     square root, still fails. Z = 0 is the bare ratio test.
//   - Bounded backlog: every program that arrived in the window finishes by
//     Window + Drain + its own tool-and-think path (the longest chain of tool
//     and think times through its calls: the part of its length that no
//     scheduler can shorten). A run still unfinished then is stopped and fails.
//   - Latency target: when P99E2E > 0, the p99 end-to-end latency of calls is
//     at most P99E2E seconds.
type SustainedRule struct {
	Window        float64 // arrival window, seconds of engine time
	Warmup        float64 // seconds at the window's start that the throughput test skips
	Drain         float64 // seconds after the window by which every program must be done (plus its tool path)
	MinThroughput float64 // fraction of the programs due by the window's end that must be done by then, e.g. 0.98
	Z             float64 // one-sided normal quantile of the throughput test's bound (DefaultZ); 0: none
	P99E2E        float64 // call e2e p99 target in seconds; 0: none
}

// DefaultZ is the throughput test's one-sided quantile, 2.576 (0.5 % in
// the tail): a search runs about ten trials (doubling to a bracket, then
// bisecting to the resolution), so by the union bound a rate the policy
// does sustain fails some trial of a search by the straddlers' spread alone
// with probability at most 5 %. The Bernoulli model leaves out that one
// burst of load delays many programs at once, which makes the real spread
// wider, not narrower: the bound is the least a steady state varies by.
const DefaultZ = 2.576

// Validate says what is wrong with the rule, if anything.
func (r SustainedRule) Validate() error {
	switch {
	case !(r.Window > 0) || math.IsInf(r.Window, 0):
		return fmt.Errorf("sustained: window %g s must be positive", r.Window)
	case !(r.Warmup >= 0) || r.Warmup >= r.Window:
		return fmt.Errorf("sustained: warm-up %g s must be in [0, window %g s)", r.Warmup, r.Window)
	case !(r.Drain >= 0) || math.IsInf(r.Drain, 0):
		return fmt.Errorf("sustained: drain %g s must be >= 0", r.Drain)
	case !(r.MinThroughput > 0 && r.MinThroughput <= 1):
		return fmt.Errorf("sustained: minimum throughput fraction %g must be in (0, 1]", r.MinThroughput)
	case !(r.Z >= 0) || math.IsInf(r.Z, 0):
		return fmt.Errorf("sustained: throughput confidence z %g must be >= 0 (0: the bare ratio)", r.Z)
	case !(r.P99E2E >= 0) || math.IsInf(r.P99E2E, 0):
		return fmt.Errorf("sustained: p99 e2e target %g s must be >= 0 (0: none)", r.P99E2E)
	}
	return nil
}

// SustainedTrial is one run of the search and its verdict.
type SustainedTrial struct {
	Rate      float64 `json:"rate"`
	Sustained bool    `json:"sustained"`
	// Reason says which part of the rule failed ("" when sustained).
	Reason string `json:"reason,omitempty"`
	// ThroughputRatio is done over due programs (see SustainedRule): with
	// every program's delay when the run drained, with those known at the
	// window's end when it was stopped.
	ThroughputRatio float64 `json:"throughput_ratio"`
	// ThroughputDone, ThroughputDue and ThroughputSD are the test's counts:
	// programs done by the window's end, programs due (Σ p_a) and the
	// steady state's standard deviation of the done count (√Σ p_a(1 − p_a)).
	ThroughputDone int     `json:"throughput_done"`
	ThroughputDue  float64 `json:"throughput_due"`
	ThroughputSD   float64 `json:"throughput_sd"`
	Unfinished     int     `json:"unfinished_programs"` // when the run was stopped
	Late           int     `json:"late_programs"`       // finished after their drain deadline
	// Run is the run's full report (latencies, recompute, swap).
	Run report.Run `json:"run"`
}

// judge watches the programs of one trial and decides its verdict.
type judge struct {
	rule     SustainedRule
	arrivals []dueProgram // every arrival of the trial
	finished []finishedProgram
	late     int
	early    bool // the early look at the window's end has run
	count    throughputCount
}

// throughputCount is the throughput test's tally (see SustainedRule).
type throughputCount struct {
	done     int     // programs done by the window's end
	due      float64 // Σ p_a
	variance float64 // Σ p_a(1 − p_a)
}

// ratio is done over due, at most 1 (1 when nothing was due).
func (c throughputCount) ratio() float64 {
	if c.due == 0 {
		return 1
	}
	return min(float64(c.done)/c.due, 1)
}

func (c throughputCount) sd() float64 { return math.Sqrt(c.variance) }

// short says whether the done count falls below min of the due ones by
// more than z standard deviations of a steady state.
func (c throughputCount) short(min, z float64) bool {
	return float64(c.done) < min*c.due-z*c.sd()
}

type dueProgram struct {
	arrival time.Duration
	path    float64 // toolPath of its program
}

type finishedProgram struct {
	arrival, finish time.Duration
}

// earlyMargin is how far below MinThroughput the ratio must be, when the
// clock passes the window's end, to end the trial there: the ratio then
// rests on the latencies of programs that arrived in the window's first
// half only, so only a clear shortfall is taken as final.
const earlyMargin = 0.1

func (j *judge) programDone(p *workload.Program, arrival, finish time.Duration) bool {
	j.finished = append(j.finished, finishedProgram{arrival, finish})
	if finish.Seconds() > j.rule.Window+j.rule.Drain+toolPath(p) {
		j.late++
		return true // the verdict is known: stop the run
	}
	if !j.early && finish > seconds(j.rule.Window) {
		j.early = true
		j.count = j.throughput(seconds((j.rule.Warmup + j.rule.Window) / 2))
		return j.count.ratio() < j.rule.MinThroughput-earlyMargin && j.count.short(j.rule.MinThroughput, j.rule.Z)
	}
	return false
}

// throughput tallies the throughput test: of the programs that arrived
// after the warm-up, those finished by the window's end (done) against
// those due by then, where a program that arrived at a counts as due with
// probability p_a = F(T − a), F the empirical distribution of the latency
// (e2e) of the programs that arrived between the warm-up and latest (the
// window's end once every program has finished). In a steady state the
// latency does not depend on the arrival time and done is a sum of
// Bernoulli(p_a), whatever the mix of short and long programs; when the
// backlog grows, late arrivals wait longer than the pooled latencies say
// and fall behind. Counting by arrival keeps programs that arrived before
// the warm-up out of both counts however long they run.
func (j *judge) throughput(latest time.Duration) throughputCount {
	warm, window := seconds(j.rule.Warmup), seconds(j.rule.Window)
	var lat []time.Duration
	var c throughputCount
	for _, f := range j.finished {
		if f.arrival < warm || f.arrival > window {
			continue
		}
		if f.finish <= window {
			c.done++
		}
		if f.arrival <= latest {
			lat = append(lat, f.finish-f.arrival)
		}
	}
	if len(lat) == 0 { // none known to have finished: each arrival is due
		for _, a := range j.arrivals {
			if a.arrival >= warm && a.arrival <= latest {
				c.due++
			}
		}
		return c
	}
	slices.Sort(lat)
	for _, a := range j.arrivals {
		if a.arrival < warm || a.arrival > window {
			continue
		}
		n, _ := slices.BinarySearch(lat, window-a.arrival+1)
		p := float64(n) / float64(len(lat))
		c.due += p
		c.variance += p * (1 - p)
	}
	return c
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// toolPath is the longest chain of think and tool time through a program's
// calls (parents before children): the seconds of its length that do not
// depend on the scheduler.
func toolPath(p *workload.Program) float64 {
	end := make(map[string]float64, len(p.Calls))
	longest := 0.0
	for _, c := range p.Calls {
		start := 0.0
		for _, par := range c.Parents {
			start = max(start, end[par])
		}
		t := start + c.ThinkTime
		for _, s := range c.Segments {
			t += s.ToolTime
		}
		end[c.ID] = t
		longest = max(longest, t)
	}
	return longest
}

// Trial runs cfg (its Rate, Seed and Duration = rule.Window) under the rule
// and returns the verdict. cfg.StopAfter and cfg.ProgramDone are set here.
func (r SustainedRule) Trial(ctx context.Context, cfg RunConfig) (SustainedTrial, error) {
	return r.TrialWith(ctx, cfg, Run)
}

// TrialWith is Trial with the replay done by run: Run for one engine, or a
// RunCluster over replicas (bench --replicas --sustained).
func (r SustainedRule) TrialWith(ctx context.Context, cfg RunConfig, run func(context.Context, RunConfig) (report.Run, error)) (SustainedTrial, error) {
	if err := r.Validate(); err != nil {
		return SustainedTrial{}, err
	}
	cfg.Duration = r.Window
	maxPath := 0.0
	for i := range cfg.Workload.Programs {
		maxPath = max(maxPath, toolPath(&cfg.Workload.Programs[i]))
	}
	cfg.StopAfter = seconds(r.Window + r.Drain + maxPath)
	arr, err := (&driver{cfg: cfg}).arrivals()
	if err != nil {
		return SustainedTrial{}, err
	}
	j := &judge{rule: r}
	for _, a := range arr {
		j.arrivals = append(j.arrivals, dueProgram{a.at, toolPath(a.prog)})
	}
	cfg.ProgramDone = j.programDone
	res, err := run(ctx, cfg)
	if err != nil {
		return SustainedTrial{}, err
	}
	if !res.Stopped() {
		j.count = j.throughput(seconds(r.Window)) // every program has finished: the final tally
	}
	c := j.count
	short := c.short(r.MinThroughput, r.Z)
	t := SustainedTrial{Rate: cfg.Rate, ThroughputRatio: c.ratio(), ThroughputDone: c.done, ThroughputDue: c.due,
		ThroughputSD: c.sd(), Late: j.late, Run: res}
	if res.Stopped() {
		t.Unfinished = res.Programs - res.ProgramsCompleted
	}
	switch {
	case j.late > 0:
		t.Reason = fmt.Sprintf("backlog: a program finished after window + drain (%g s) + its tool path", r.Window+r.Drain)
	case short && (j.early || !res.Stopped()):
		t.Reason = fmt.Sprintf("throughput: %.3f of the programs due finished (%d of %.1f, sd %.1f) < %g by more than %g sd",
			c.ratio(), c.done, c.due, c.sd(), r.MinThroughput, r.Z)
	case res.Stopped():
		t.Reason = fmt.Sprintf("backlog: %d programs unfinished at %g s", t.Unfinished, res.StoppedAtS)
	case r.P99E2E > 0 && res.E2EP99S > r.P99E2E:
		t.Reason = fmt.Sprintf("latency: p99 e2e %.1f s > target %g s", res.E2EP99S, r.P99E2E)
	default:
		t.Sustained = true
	}
	return t, nil
}
