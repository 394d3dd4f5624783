package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/bench/workload"
)

// familyFlags are the distribution flags of the generated families that
// take them (--coding-*, --fanout-*), so that any shape can be tried.
type familyFlags struct {
	coding      workload.CodingOptions
	codingTools string
	fanout      workload.FanoutOptions
	names       map[string]string // flag name → family
}

func addFamilyFlags(fl *pflag.FlagSet, f *familyFlags) {
	f.coding, f.fanout = workload.DefaultCodingOptions(), workload.DefaultFanoutOptions()
	f.names = map[string]string{}
	c, o := &f.coding, &f.fanout
	fv := func(family string, p *float64, name, usage string) {
		fl.Float64Var(p, name, *p, usage)
		f.names[name] = family
	}
	iv := func(family string, p *int, name, usage string) {
		fl.IntVar(p, name, *p, usage)
		f.names[name] = family
	}
	iv("coding", &c.Programs, "coding-programs", "coding: programs in the population arrivals sample from")
	fv("coding", &c.ToolCallsMean, "coding-tool-calls-mean", "coding: mean tool calls per program (lognormal)")
	fv("coding", &c.ToolCallsSigma, "coding-tool-calls-sigma", "coding: lognormal shape of tool calls per program")
	iv("coding", &c.ToolCallsMin, "coding-tool-calls-min", "coding: fewest tool calls per program")
	iv("coding", &c.ToolCallsMax, "coding-tool-calls-max", "coding: most tool calls per program")
	fv("coding", &c.FirstPromptMean, "coding-first-prompt-mean", "coding: mean first prompt, tokens (lognormal)")
	fv("coding", &c.FirstPromptSigma, "coding-first-prompt-sigma", "coding: lognormal shape of the first prompt")
	iv("coding", &c.FirstPromptMin, "coding-first-prompt-min", "coding: smallest first prompt, tokens")
	iv("coding", &c.MaxContext, "coding-max-context", "coding: context budget, tokens: no tool call once the context would pass it")
	fv("coding", &c.DecodeMean, "coding-decode-mean", "coding: mean decode per turn, tokens (lognormal)")
	fv("coding", &c.DecodeSigma, "coding-decode-sigma", "coding: lognormal shape of decode per turn")
	iv("coding", &c.DecodeMax, "coding-decode-max", "coding: most decode per turn, tokens")
	fv("coding", &c.ToolReturnMean, "coding-tool-return-mean", "coding: mean tool result, tokens (lognormal)")
	fv("coding", &c.ToolReturnSigma, "coding-tool-return-sigma", "coding: lognormal shape of tool results")
	iv("coding", &c.ToolReturnMax, "coding-tool-return-max", "coding: largest tool result, tokens")
	fv("coding", &c.ToolMaxTime, "coding-tool-max-time", "coding: tool timeout, seconds")
	iv("coding", &c.ToolsPerCall, "coding-tools-per-call", "coding: split a session into client-side steps of at most this many tool calls (0: one call, tools run server-side)")
	fl.StringVar(&f.codingTools, "coding-tools", formatTools(c.Tools), "coding: tool kinds as name:weight:median_s:sigma, comma-separated (lognormal durations)")
	f.names["coding-tools"] = "coding"

	iv("fanout", &o.Programs, "fanout-programs", "fanout: programs in the population arrivals sample from")
	fv("fanout", &o.SubagentsMean, "fanout-subagents-mean", "fanout: mean parallel subagents per program (lognormal)")
	fv("fanout", &o.SubagentsSigma, "fanout-subagents-sigma", "fanout: lognormal shape of subagents per program")
	iv("fanout", &o.SubagentsMax, "fanout-subagents-max", "fanout: most subagents per program")
	fv("fanout", &o.TurnsMean, "fanout-turns-mean", "fanout: mean turns per subagent (lognormal)")
	fv("fanout", &o.TurnsSigma, "fanout-turns-sigma", "fanout: lognormal shape of turns per subagent")
	iv("fanout", &o.TurnsMax, "fanout-turns-max", "fanout: most turns per subagent")
	fv("fanout", &o.ParallelMean, "fanout-parallel-mean", "fanout: mean parallel tool calls per turn (lognormal)")
	fv("fanout", &o.ParallelSigma, "fanout-parallel-sigma", "fanout: lognormal shape of parallel tool calls per turn")
	iv("fanout", &o.ParallelMax, "fanout-parallel-max", "fanout: most parallel tool calls per turn")
	fv("fanout", &o.LeadPromptMean, "fanout-lead-prompt-mean", "fanout: mean lead prompt, tokens")
	fv("fanout", &o.SubPromptMean, "fanout-sub-prompt-mean", "fanout: mean subagent prompt, tokens")
	fv("fanout", &o.PlanDecodeMean, "fanout-plan-decode-mean", "fanout: mean plan decode, tokens")
	fv("fanout", &o.DecodeMean, "fanout-decode-mean", "fanout: mean subagent turn decode, tokens")
	fv("fanout", &o.SynthesisDecodeMean, "fanout-synthesis-decode-mean", "fanout: mean final report decode, tokens")
	fv("fanout", &o.ToolReturnMean, "fanout-tool-return-mean", "fanout: mean tool result, tokens")
	fv("fanout", &o.Tool.Median, "fanout-tool-median", "fanout: median tool duration, seconds (lognormal)")
	fv("fanout", &o.Tool.Sigma, "fanout-tool-sigma", "fanout: lognormal shape of tool durations")
	fv("fanout", &o.ToolMaxTime, "fanout-tool-max-time", "fanout: tool timeout, seconds")
}

// options returns the workload options of the chosen family, or an error
// when a family's flag is given for another workload or is malformed.
func (f *familyFlags) options(name string, changed func(string) bool) (workload.Options, error) {
	for flag, family := range f.names {
		if changed(flag) && family != name {
			return workload.Options{}, usagef("--%s is a flag of --workload %s, not %s", flag, family, name)
		}
	}
	switch name {
	case "coding":
		tools, err := parseTools(f.codingTools)
		if err != nil {
			return workload.Options{}, usagef("invalid --coding-tools %q: %v", f.codingTools, err)
		}
		c := f.coding
		c.Tools = tools
		if err := c.Validate(); err != nil {
			return workload.Options{}, usageError{err.Error()}
		}
		return workload.Options{Coding: &c}, nil
	case "fanout":
		o := f.fanout
		if err := o.Validate(); err != nil {
			return workload.Options{}, usageError{err.Error()}
		}
		return workload.Options{Fanout: &o}, nil
	}
	return workload.Options{}, nil
}

func formatTools(ts []workload.ToolKind) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s:%g:%g:%g", t.Name, t.Weight, t.Median, t.Sigma)
	}
	return strings.Join(parts, ",")
}

func parseTools(s string) ([]workload.ToolKind, error) {
	var out []workload.ToolKind
	for _, part := range strings.Split(s, ",") {
		f := strings.Split(strings.TrimSpace(part), ":")
		if len(f) != 4 {
			return nil, fmt.Errorf("%q: want name:weight:median_s:sigma", part)
		}
		var v [3]float64
		for i := range v {
			x, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", part, err)
			}
			v[i] = x
		}
		out = append(out, workload.ToolKind{Name: f[0], Weight: v[0], Median: v[1], Sigma: v[2]})
	}
	return out, nil
}
