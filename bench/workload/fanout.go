package workload

import (
	"fmt"
	"math"
)

// FanoutOptions are the distributions of the fanout family; pitstop bench
// exposes each as a flag (--fanout-*). Defaults: DefaultFanoutOptions.
type FanoutOptions struct {
	Programs int
	// Subagents the lead starts in parallel: lognormal mean and shape, in [1, SubagentsMax].
	SubagentsMean, SubagentsSigma float64
	SubagentsMax                  int
	// Turns of one subagent (each ends in a batch of parallel tool calls but the last).
	TurnsMean, TurnsSigma float64
	TurnsMax              int
	// Parallel tool calls per turn: lognormal mean and shape, in [1, ParallelMax].
	// The turn resumes when the slowest returns, with all their results.
	ParallelMean, ParallelSigma float64
	ParallelMax                 int
	LeadPromptMean              float64 // the lead's prompt (system prompt, tools, query), tokens
	SubPromptMean               float64 // a subagent's own prompt (its task), tokens
	PlanDecodeMean              float64 // the lead's plan
	DecodeMean                  float64 // a subagent turn (reasoning, tool calls; the last one its findings)
	SynthesisDecodeMean         float64 // the lead's final report
	PromptSigma, DecodeSigma    float64
	ToolReturnMean              float64 // tokens per tool result
	ToolReturnSigma             float64
	Tool                        ToolKind // duration of one tool call (web search or fetch)
	ToolMaxTime                 float64
}

// DefaultFanoutOptions are the defaults of the fanout family, after
// Anthropic's description of its multi-agent research system ("How we built
// our multi-agent research system", June 2025, cited in NOTICE): a lead
// agent plans and starts 3–5 subagents in parallel, each with its own
// context window, each calling 3 or more tools in parallel per turn, and
// the lead synthesises their condensed findings. The counts of turns, the
// token sizes and the tool duration (a web search or fetch: median 1 s,
// shape 1, at most 120 s) are our choices; the source gives none. None was
// chosen by looking at bench results.
func DefaultFanoutOptions() FanoutOptions {
	return FanoutOptions{
		Programs:      300,
		SubagentsMean: 4, SubagentsSigma: 0.3, SubagentsMax: 16,
		TurnsMean: 5, TurnsSigma: 0.5, TurnsMax: 20,
		ParallelMean: 3, ParallelSigma: 0.4, ParallelMax: 8,
		LeadPromptMean: 2000, SubPromptMean: 800,
		PlanDecodeMean: 300, DecodeMean: 150, SynthesisDecodeMean: 1000,
		PromptSigma: 0.4, DecodeSigma: 0.7,
		ToolReturnMean: 600, ToolReturnSigma: 0.8,
		Tool:        ToolKind{Name: "web", Weight: 1, Median: 1, Sigma: 1},
		ToolMaxTime: 120,
	}
}

// Validate says what is wrong with the options, if anything.
func (o *FanoutOptions) Validate() error {
	for _, c := range []struct {
		n string
		v float64
	}{{"programs", float64(o.Programs)}, {"subagents mean", o.SubagentsMean}, {"subagents max", float64(o.SubagentsMax)},
		{"turns mean", o.TurnsMean}, {"turns max", float64(o.TurnsMax)}, {"parallel mean", o.ParallelMean},
		{"parallel max", float64(o.ParallelMax)}, {"lead prompt mean", o.LeadPromptMean}, {"sub prompt mean", o.SubPromptMean},
		{"plan decode mean", o.PlanDecodeMean}, {"decode mean", o.DecodeMean}, {"synthesis decode mean", o.SynthesisDecodeMean},
		{"tool-return mean", o.ToolReturnMean}, {"tool max time", o.ToolMaxTime}} {
		if !(c.v > 0) || math.IsInf(c.v, 0) {
			return fmt.Errorf("fanout: %s %g must be positive", c.n, c.v)
		}
	}
	for _, s := range []float64{o.SubagentsSigma, o.TurnsSigma, o.ParallelSigma, o.PromptSigma, o.DecodeSigma, o.ToolReturnSigma} {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("fanout: every sigma must be positive, got %g", s)
		}
	}
	return validateTools("fanout", []ToolKind{o.Tool})
}

// Fanout is the orchestrator-worker family with its default options.
func Fanout(seed int64) (*Workload, error) { return FanoutWith(seed, DefaultFanoutOptions()) }

// FanoutWith generates o.Programs research programs, each a DAG: a plan call
// of the lead; then, all at once, one call per subagent (thread s<i>, its own
// prompt, not the lead's context), whose turns each end in a batch of
// parallel tool calls — one segment whose tool time is the slowest of the
// batch and whose result is all of theirs; then a synthesis call of the lead
// that continues the plan with every subagent's findings (its last turn's
// decode) as new tokens. It differs from every other family in its arrival
// of work: each program brings a burst of parallel, independent contexts at
// once, and its end waits for the slowest of them.
func FanoutWith(seed int64, o FanoutOptions) (*Workload, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := newRand(seed, "fanout")
	subs := newLognorm(o.SubagentsMean, o.SubagentsSigma, 1, o.SubagentsMax).draws(r, o.Programs)
	nSubs := sum(subs)
	turns := newLognorm(o.TurnsMean, o.TurnsSigma, 1, o.TurnsMax).draws(r, nSubs)
	nTurns := sum(turns)
	par := newLognorm(o.ParallelMean, o.ParallelSigma, 1, o.ParallelMax).draws(r, nTurns)
	leads := newLognorm(o.LeadPromptMean, o.PromptSigma, 1, 65536).draws(r, o.Programs)
	plans := newLognorm(o.PlanDecodeMean, o.DecodeSigma, 1, 8192).draws(r, o.Programs)
	synth := newLognorm(o.SynthesisDecodeMean, o.DecodeSigma, 1, 8192).draws(r, o.Programs)
	subPrompts := newLognorm(o.SubPromptMean, o.PromptSigma, 1, 65536).draws(r, nSubs)
	decs := newLognorm(o.DecodeMean, o.DecodeSigma, 1, 8192).draws(r, nTurns)
	rets := newLognorm(o.ToolReturnMean, o.ToolReturnSigma, 1, 16384).draws(r, sum(par))
	ps := make([]Program, o.Programs)
	for i := range ps {
		p := Program{ID: fmt.Sprintf("fanout-%04d", i)}
		p.Calls = append(p.Calls, Call{ID: "plan", Thread: "lead", NewTokens: leads[i], Segments: []Segment{{Decode: plans[i]}}})
		synthesis := Call{ID: "synthesis", Thread: "lead", Parents: []string{"plan"}, ContinueParent: true, Segments: []Segment{{Decode: synth[i]}}}
		for s := range subs[i] {
			c := Call{ID: fmt.Sprintf("s%d", s), Thread: fmt.Sprintf("s%d", s), Parents: []string{"plan"}, NewTokens: subPrompts[0]}
			subPrompts = subPrompts[1:]
			n := turns[0]
			turns = turns[1:]
			for t := range n {
				d := decs[0]
				decs = decs[1:]
				if t == n-1 {
					c.Segments = append(c.Segments, Segment{Decode: d})
					synthesis.NewTokens += d // its findings go back to the lead
					break
				}
				seg := Segment{Decode: d, Tool: o.Tool.Name}
				for range par[0] {
					seg.ToolTime = max(seg.ToolTime, toolTime(r, o.Tool, o.ToolMaxTime))
					seg.ToolReturn += rets[0]
					rets = rets[1:]
				}
				par = par[1:]
				c.Segments = append(c.Segments, seg)
			}
			p.Calls = append(p.Calls, c)
			synthesis.Parents = append(synthesis.Parents, c.ID)
		}
		p.Calls = append(p.Calls, synthesis)
		ps[i] = p
	}
	return finish(&Workload{Name: "fanout",
		Description: fmt.Sprintf("synthetic orchestrator-worker research agents (%g parallel subagents, %g turns each, %g parallel tool calls per turn)",
			o.SubagentsMean, o.TurnsMean, o.ParallelMean),
		Programs: ps})
}
