package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/pitstop-llm/pitstop/bench/report"
)

// SustainedSearch finds, per policy and seed, the highest arrival rate that
// the policy sustains under Rule: it starts at Start, doubles (or halves)
// until it has a sustained rate below an unsustained one, then bisects until
// the two are at most Resolution apart, and reports the sustained end. A
// policy that sustains MaxRate reports MaxRate; one that does not sustain
// Resolution reports 0. The searches of the (policy, seed) pairs run
// Parallel at a time; the trials of one search run in order.
type SustainedSearch struct {
	Rule       SustainedRule
	Policies   []string
	Seeds      []int64
	Start      float64 // first rate tried, programs per second
	Resolution float64 // programs per second between the reported rate and the lowest unsustained one
	MaxRate    float64 // the search does not go above this
	Parallel   int
	// NewRun returns a fresh RunConfig (workload, engine, executor, policy
	// instance) for one trial; Trial sets Duration, StopAfter and ProgramDone.
	NewRun func(policy string, rate float64, seed int64) (RunConfig, error)
	// RunTrial, when set, replays a trial's config instead of Run: a
	// cluster search (bench --replicas) runs RunCluster with the replicas
	// and balancer its series (policy) name stands for.
	RunTrial func(ctx context.Context, policy string, cfg RunConfig) (report.Run, error)
	// Log, when set, gets one line per trial.
	Log io.Writer
}

// SustainedSeed is one search's result.
type SustainedSeed struct {
	Seed          int64            `json:"seed"`
	SustainedRate float64          `json:"sustained_rate"`
	Unsustained   float64          `json:"lowest_unsustained_rate"` // 0: MaxRate was sustained
	Trials        []SustainedTrial `json:"trials"`                  // in the order run
}

// AtRate is the trial at the sustained rate (nil when none was sustained).
func (s *SustainedSeed) AtRate() *SustainedTrial {
	for i := range s.Trials {
		if t := &s.Trials[i]; t.Sustained && t.Rate == s.SustainedRate {
			return t
		}
	}
	return nil
}

// SustainedPolicy is one policy's results over the seeds.
type SustainedPolicy struct {
	Policy string `json:"policy"`
	// SustainedRate is the mean over seeds; Min and Max bound it.
	SustainedRate    float64         `json:"sustained_rate"`
	SustainedRateMin float64         `json:"sustained_rate_min"`
	SustainedRateMax float64         `json:"sustained_rate_max"`
	Seeds            []SustainedSeed `json:"seeds"`
}

// SustainedReport is the JSON of `pitstop bench --sustained`.
type SustainedReport struct {
	Workload string `json:"workload"`
	Executor string `json:"executor"`
	Profile  string `json:"profile"`
	Replicas int    `json:"replicas,omitempty"` // bench --replicas: policies are then policy/balancer series
	// PoolSeed is the seed the workload's program pool was drawn from (bench
	// --seed; nil for a trace file). The search's seeds vary the arrivals and
	// the sampling over that one pool, so a search's seed N is not the
	// experiment `--seed N` runs: compare seeds only between reports with the
	// same pool seed.
	PoolSeed      *int64            `json:"pool_seed,omitempty"`
	WindowS       float64           `json:"window_s"`
	WarmupS       float64           `json:"warmup_s"`
	DrainS        float64           `json:"drain_s"`
	MinThroughput float64           `json:"min_throughput"`
	ThroughputZ   float64           `json:"throughput_z"`     // the throughput test's one-sided bound, in sd (SustainedRule.Z)
	P99E2ES       float64           `json:"p99_e2e_target_s"` // 0: none
	Resolution    float64           `json:"resolution"`
	MaxRate       float64           `json:"max_rate"`
	Policies      []SustainedPolicy `json:"policies"`
}

// Validate says what is wrong with the search, if anything.
func (s *SustainedSearch) Validate() error {
	if err := s.Rule.Validate(); err != nil {
		return err
	}
	switch {
	case len(s.Policies) == 0:
		return fmt.Errorf("sustained: no policies")
	case len(s.Seeds) == 0:
		return fmt.Errorf("sustained: no seeds")
	case !(s.Resolution > 0) || math.IsInf(s.Resolution, 0):
		return fmt.Errorf("sustained: resolution %g must be a positive rate", s.Resolution)
	case !(s.Start > 0) || !(s.MaxRate >= s.Start) || math.IsInf(s.MaxRate, 0):
		return fmt.Errorf("sustained: start rate %g and maximum rate %g must satisfy 0 < start <= max", s.Start, s.MaxRate)
	case s.NewRun == nil:
		return fmt.Errorf("sustained: no run constructor")
	}
	return nil
}

// Run searches every (policy, seed) and returns the results in the order of
// Policies and Seeds; rep's Workload, Executor and Profile are the caller's.
func (s *SustainedSearch) Run(ctx context.Context) ([]SustainedPolicy, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	res := make([]SustainedPolicy, len(s.Policies))
	for i, p := range s.Policies {
		res[i] = SustainedPolicy{Policy: p, Seeds: make([]SustainedSeed, len(s.Seeds))}
	}
	var logMu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(s.Parallel, 1))
	for pi, pol := range s.Policies {
		for si, seed := range s.Seeds {
			g.Go(func() error {
				r, err := s.search(gctx, pol, seed, func(t SustainedTrial) {
					if s.Log == nil {
						return
					}
					logMu.Lock()
					defer logMu.Unlock()
					verdict := "sustained"
					if !t.Sustained {
						verdict = "NOT sustained: " + t.Reason
					}
					fmt.Fprintf(s.Log, "sustained search %s seed %d: rate %g %s (throughput %.3f, wall %.1f s)\n",
						pol, seed, t.Rate, verdict, t.ThroughputRatio, t.Run.WallS)
				})
				if err != nil {
					return fmt.Errorf("%s seed %d: %w", pol, seed, err)
				}
				res[pi].Seeds[si] = r // distinct elements: no lock needed
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i := range res {
		rates := make([]float64, len(res[i].Seeds))
		for j, sd := range res[i].Seeds {
			rates[j] = sd.SustainedRate
		}
		sum := 0.0
		for _, r := range rates {
			sum += r
		}
		res[i].SustainedRate = sum / float64(len(rates))
		res[i].SustainedRateMin, res[i].SustainedRateMax = slices.Min(rates), slices.Max(rates)
	}
	return res, nil
}

// search runs one (policy, seed) search.
func (s *SustainedSearch) search(ctx context.Context, pol string, seed int64, logf func(SustainedTrial)) (SustainedSeed, error) {
	out := SustainedSeed{Seed: seed}
	lo, hi := 0.0, math.Inf(1) // highest sustained, lowest unsustained
	try := func(rate float64) error {
		cfg, err := s.NewRun(pol, rate, seed)
		if err != nil {
			return err
		}
		cfg.Rate, cfg.Seed = rate, seed
		run := Run
		if s.RunTrial != nil {
			run = func(ctx context.Context, cfg RunConfig) (report.Run, error) { return s.RunTrial(ctx, pol, cfg) }
		}
		t, err := s.Rule.TrialWith(ctx, cfg, run)
		if err != nil {
			return fmt.Errorf("rate %g: %w", rate, err)
		}
		logf(t)
		out.Trials = append(out.Trials, t)
		if t.Sustained {
			lo = max(lo, rate)
		} else {
			hi = min(hi, rate)
		}
		return nil
	}
	if err := try(s.Start); err != nil {
		return out, err
	}
	for {
		var next float64
		switch {
		case math.IsInf(hi, 1):
			if lo >= s.MaxRate {
				out.SustainedRate = lo
				return out, nil
			}
			next = min(2*lo, s.MaxRate)
		case lo == 0:
			if hi <= s.Resolution {
				out.Unsustained = hi
				return out, nil
			}
			next = hi / 2
		case hi-lo <= s.Resolution:
			out.SustainedRate, out.Unsustained = lo, hi
			return out, nil
		default:
			next = (lo + hi) / 2
		}
		if err := try(next); err != nil {
			return out, err
		}
	}
}

// SustainedRows is the text table of a search: one line per policy with the
// mean, min and max sustained rate and, at each seed's sustained rate, the
// mean of the run's mean and p99 e2e, throughput, recompute tokens and swap.
func SustainedRows(w io.Writer, rep *SustainedReport) {
	fmt.Fprintf(w, "sustained rate (programs/s) on %s, %s; window %g s, warm-up %g s, drain %g s, done >= %g of due - %g sd",
		rep.Workload, rep.Profile, rep.WindowS, rep.WarmupS, rep.DrainS, rep.MinThroughput, rep.ThroughputZ)
	if rep.P99E2ES > 0 {
		fmt.Fprintf(w, ", p99 e2e <= %g s", rep.P99E2ES)
	}
	fmt.Fprintf(w, "; resolution %g; metrics are means over seeds at each seed's sustained rate\n", rep.Resolution)
	wid := 10 // policy/balancer series of a cluster search are longer
	for _, p := range rep.Policies {
		wid = max(wid, len(p.Policy))
	}
	fmt.Fprintf(w, "%*s %15s %17s %9s %9s %8s %13s %13s %6s\n", wid, "policy", "sustained_rate", "per_seed", "e2e_mean", "e2e_p99", "thr_rps", "recompute_M", "swap_out_GB", "trials")
	for _, p := range rep.Policies {
		per := ""
		var runs []report.Run
		trials := 0
		for i, sd := range p.Seeds {
			if i > 0 {
				per += "/"
			}
			per += fmt.Sprintf("%g", sd.SustainedRate)
			trials += len(sd.Trials)
			if t := sd.AtRate(); t != nil {
				runs = append(runs, t.Run)
			}
		}
		avg := func(f func(report.Run) float64) float64 {
			if len(runs) == 0 {
				return 0
			}
			s := 0.0
			for _, r := range runs {
				s += f(r)
			}
			return s / float64(len(runs))
		}
		fmt.Fprintf(w, "%*s %15.3f %17s %9.1f %9.1f %8.2f %13.2f %13.1f %6d\n", wid, p.Policy, p.SustainedRate, per,
			avg(func(r report.Run) float64 { return r.E2EMeanS }), avg(func(r report.Run) float64 { return r.E2EP99S }),
			avg(func(r report.Run) float64 { return r.ThroughputRPS }), avg(func(r report.Run) float64 { return float64(r.RecomputeTokens) / 1e6 }),
			avg(func(r report.Run) float64 { return float64(r.SwapOutBytes) / 1e9 }), trials)
	}
}
