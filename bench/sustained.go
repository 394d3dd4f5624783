package bench

import (
	"context"
	"fmt"
	"math"
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
//     by the window's end are at least MinThroughput of those due by then:
//     whose arrival plus tool path (below) plus the run's mean residual
//     delay (e2e minus tool path, over the programs that arrived after the
//     warm-up) is at most the window's end. A program's own length (a chat of twenty turns
//     with human think times takes minutes unloaded) thus does not read as
//     lost throughput; under overload the backlog grows, programs due by
//     the window's end are not done, and the ratio falls.
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
	MinThroughput float64 // fraction of the offered rate that must complete, e.g. 0.98
	P99E2E        float64 // call e2e p99 target in seconds; 0: none
}

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
	Unfinished      int     `json:"unfinished_programs"` // when the run was stopped
	Late            int     `json:"late_programs"`       // finished after their drain deadline
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
	ratio    float64
}

type dueProgram struct {
	arrival time.Duration
	path    float64 // toolPath of its program
}

type finishedProgram struct {
	arrival, finish time.Duration
	residue         float64 // e2e minus tool path, seconds
}

// earlyMargin is how far below MinThroughput the ratio must be, when the
// clock passes the window's end, to end the trial there: the ratio then
// uses the residual delays known so far (those of long programs still
// running are missing), so only a clear shortfall is taken as final.
const earlyMargin = 0.05

func (j *judge) programDone(p *workload.Program, arrival, finish time.Duration) bool {
	path := toolPath(p)
	j.finished = append(j.finished, finishedProgram{arrival, finish, (finish - arrival).Seconds() - path})
	if finish.Seconds() > j.rule.Window+j.rule.Drain+path {
		j.late++
		return true // the verdict is known: stop the run
	}
	if !j.early && finish > seconds(j.rule.Window) {
		j.early = true
		j.ratio = j.throughput()
		return j.ratio < j.rule.MinThroughput-earlyMargin
	}
	return false
}

// throughput is the throughput ratio from the programs finished so far: of
// the programs that arrived after the warm-up, those finished by the
// window's end over those due by then, a program being due when its arrival
// plus its tool path plus the mean residual delay (e2e minus tool path) of
// the finished programs that arrived after the warm-up is at most the
// window's end. Counting by arrival, not by finish, keeps programs that
// arrived before the warm-up out of both counts however long they run; the
// mean residual (not the median) makes the two counts equal in expectation
// in a steady state once every program has finished.
func (j *judge) throughput() float64 {
	warm, window := seconds(j.rule.Warmup), seconds(j.rule.Window)
	var res []float64
	done := 0
	for _, f := range j.finished {
		if f.arrival < warm || f.arrival > window {
			continue
		}
		res = append(res, f.residue)
		if f.finish <= window {
			done++
		}
	}
	shift := mean(res)
	due := 0
	for _, a := range j.arrivals {
		if a.arrival >= warm && a.arrival.Seconds()+a.path+shift <= j.rule.Window {
			due++
		}
	}
	if due == 0 {
		return 1 // nothing was due: nothing to keep up with
	}
	return min(float64(done)/float64(due), 1)
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
	run, err := Run(ctx, cfg)
	if err != nil {
		return SustainedTrial{}, err
	}
	if !run.Stopped() {
		j.ratio = j.throughput() // every program has finished: the final ratio
	}
	t := SustainedTrial{Rate: cfg.Rate, ThroughputRatio: j.ratio, Late: j.late, Run: run}
	if run.Stopped() {
		t.Unfinished = run.Programs - run.ProgramsCompleted
	}
	switch {
	case j.late > 0:
		t.Reason = fmt.Sprintf("backlog: a program finished after window + drain (%g s) + its tool path", r.Window+r.Drain)
	case j.ratio < r.MinThroughput && (j.early || !run.Stopped()):
		t.Reason = fmt.Sprintf("throughput: %.3f of the offered rate < %g", j.ratio, r.MinThroughput)
	case run.Stopped():
		t.Reason = fmt.Sprintf("backlog: %d programs unfinished at %g s", t.Unfinished, run.StoppedAtS)
	case r.P99E2E > 0 && run.E2EP99S > r.P99E2E:
		t.Reason = fmt.Sprintf("latency: p99 e2e %.1f s > target %g s", run.E2EP99S, r.P99E2E)
	default:
		t.Sustained = true
	}
	return t, nil
}
