package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ToolKind is one kind of tool an agent calls, with a lognormal duration:
// median Median seconds, shape Sigma, clamped to [0.001 s, MaxTime].
type ToolKind struct {
	Name   string
	Weight float64 // relative frequency among the program's tool calls
	Median float64 // seconds
	Sigma  float64
}

// CodingOptions are the distributions of the coding family; pitstop bench
// exposes each as a flag (--coding-*). Defaults: DefaultCodingOptions.
type CodingOptions struct {
	Programs int // population size programs are sampled from
	// Tool calls per program: lognormal with this mean and shape, in [Min, Max].
	ToolCallsMean, ToolCallsSigma float64
	ToolCallsMin, ToolCallsMax    int
	// The first prompt (system prompt, tool schemas, the task and the files
	// the harness puts in context): lognormal mean and shape, in [Min, MaxContext].
	FirstPromptMean, FirstPromptSigma float64
	FirstPromptMin                    int
	// MaxContext ends a session early: no tool call is made once the context
	// would pass it (agents stop or are cut off at their context budget).
	MaxContext int
	// Decode per turn (reasoning and the tool call's arguments, or the final
	// answer): lognormal mean and shape, at most DecodeMax.
	DecodeMean, DecodeSigma float64
	DecodeMax               int
	// Tool result tokens appended to the context: lognormal mean and shape,
	// at most ToolReturnMax.
	ToolReturnMean, ToolReturnSigma float64
	ToolReturnMax                   int
	Tools                           []ToolKind
	ToolMaxTime                     float64 // seconds: the harness's command timeout
	// ToolsPerCall splits a session into calls of at most this many tool
	// calls, each continuing the previous (a client-side loop that returns
	// to the user between steps); 0 keeps the whole session in one call
	// whose tool calls run server-side, the call paused at each.
	ToolsPerCall int
}

// DefaultCodingOptions are the defaults of the coding family. They follow
// the description of long-context coding and research agents
// (issue 12: contexts of 3k–30k tokens, 5–30 tool calls per program, tool
// times lognormal with medians from 50 ms to 30 s and a heavy tail, tool
// results of hundreds of tokens), which matches the public trajectory
// statistics cited in NOTICE: OpenHands on SWE-rebench (nebius/SWE-rebench-
// openhands-trajectories: 64 turns per session on average, about 27k tokens
// of context at the deepest turn), "The Limits of Long-Context Reasoning in
// Automated Bug Fixing" (arXiv 2602.16069: successful agentic trajectories
// mostly stay under 20k tokens), and the SyFI TraceLab tool-latency
// profiles of Claude Code and Codex sessions (most tool calls under a
// second, a long tail of commands past a minute). The tool mix and medians
// are our reading of those profiles (file reads and searches, edits, shell
// commands, test runs, builds or installs); the 300 s cap is the command
// timeout of the OpenHands SWE-bench harness configuration (NVIDIA NeMo Gym,
// swebench_openhands.yaml). None was chosen by looking at bench results.
func DefaultCodingOptions() CodingOptions {
	return CodingOptions{
		Programs:      400,
		ToolCallsMean: 12, ToolCallsSigma: 0.5, ToolCallsMin: 5, ToolCallsMax: 30,
		FirstPromptMean: 4000, FirstPromptSigma: 0.3, FirstPromptMin: 3000,
		MaxContext: 30000,
		DecodeMean: 150, DecodeSigma: 0.8, DecodeMax: 2048,
		ToolReturnMean: 500, ToolReturnSigma: 1.0, ToolReturnMax: 8000,
		Tools: []ToolKind{
			{Name: "read", Weight: 0.45, Median: 0.05, Sigma: 1.0},
			{Name: "edit", Weight: 0.20, Median: 0.2, Sigma: 1.0},
			{Name: "shell", Weight: 0.20, Median: 1, Sigma: 1.5},
			{Name: "test", Weight: 0.10, Median: 10, Sigma: 1.2},
			{Name: "build", Weight: 0.05, Median: 30, Sigma: 1.2},
		},
		ToolMaxTime: 300,
	}
}

// Validate says what is wrong with the options, if anything.
func (o *CodingOptions) Validate() error {
	pos := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("coding: %s %g must be positive", name, v)
		}
		return nil
	}
	for _, c := range []struct {
		n string
		v float64
	}{{"programs", float64(o.Programs)}, {"tool-calls mean", o.ToolCallsMean}, {"tool-calls sigma", o.ToolCallsSigma},
		{"first-prompt mean", o.FirstPromptMean}, {"first-prompt sigma", o.FirstPromptSigma}, {"max context", float64(o.MaxContext)},
		{"decode mean", o.DecodeMean}, {"decode sigma", o.DecodeSigma}, {"decode max", float64(o.DecodeMax)},
		{"tool-return mean", o.ToolReturnMean}, {"tool-return sigma", o.ToolReturnSigma}, {"tool-return max", float64(o.ToolReturnMax)},
		{"tool max time", o.ToolMaxTime}} {
		if err := pos(c.n, c.v); err != nil {
			return err
		}
	}
	switch {
	case o.ToolCallsMin < 0 || o.ToolCallsMax < max(o.ToolCallsMin, 1):
		return fmt.Errorf("coding: tool calls in [%d, %d]: need 0 <= min <= max, max >= 1", o.ToolCallsMin, o.ToolCallsMax)
	case o.FirstPromptMin < 1 || o.FirstPromptMin > o.MaxContext:
		return fmt.Errorf("coding: first-prompt minimum %d must be in [1, max context %d]", o.FirstPromptMin, o.MaxContext)
	case o.MaxContext > MaxTokens:
		return fmt.Errorf("coding: max context %d above %d", o.MaxContext, MaxTokens)
	case o.ToolsPerCall < 0:
		return fmt.Errorf("coding: tools per call %d must be >= 0 (0: one call per session)", o.ToolsPerCall)
	}
	return validateTools("coding", o.Tools)
}

func validateTools(family string, tools []ToolKind) error {
	if len(tools) == 0 {
		return fmt.Errorf("%s: no tool kinds", family)
	}
	total := 0.0
	for _, t := range tools {
		if t.Name == "" || !(t.Weight >= 0) || !(t.Median > 0) || !(t.Sigma >= 0) || math.IsInf(t.Weight+t.Median+t.Sigma, 0) {
			return fmt.Errorf("%s: tool %q: need a name, weight >= 0, median > 0 s, sigma >= 0", family, t.Name)
		}
		total += t.Weight
	}
	if !(total > 0) {
		return fmt.Errorf("%s: tool weights sum to 0", family)
	}
	return nil
}

// Coding is the long-context coding-agent family with its default options.
func Coding(seed int64) (*Workload, error) {
	o := DefaultCodingOptions()
	return CodingWith(seed, o)
}

// CodingWith generates o.Programs coding-agent sessions: a first prompt of
// thousands of tokens, then turns of decode (reasoning and a tool call),
// each followed by a tool whose kind is drawn by weight and whose duration
// is lognormal around the kind's median, its result appended to the
// context, until the session's tool calls are spent or the context would
// pass MaxContext; a last turn writes the answer. Token counts are
// discretised lognormals calibrated to their means (one draw per stratum,
// see dist.go); everything is a function of the seed.
func CodingWith(seed int64, o CodingOptions) (*Workload, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := newRand(seed, "coding")
	counts := newLognorm(o.ToolCallsMean, o.ToolCallsSigma, o.ToolCallsMin, o.ToolCallsMax).draws(r, o.Programs)
	firsts := newLognorm(o.FirstPromptMean, o.FirstPromptSigma, o.FirstPromptMin, o.MaxContext).draws(r, o.Programs)
	turns := sum(counts) + o.Programs
	decs := newLognorm(o.DecodeMean, o.DecodeSigma, 1, o.DecodeMax).draws(r, turns)
	rets := newLognorm(o.ToolReturnMean, o.ToolReturnSigma, 1, o.ToolReturnMax).draws(r, turns)
	ps := make([]Program, o.Programs)
	for i := range ps {
		ctx := firsts[i]
		var segs []Segment
		for range counts[i] {
			d, ret := decs[0], rets[0]
			decs, rets = decs[1:], rets[1:]
			if ctx+d+ret+o.DecodeMax > o.MaxContext {
				break // the context budget is spent: the agent answers now
			}
			k := pickTool(r, o.Tools)
			segs = append(segs, Segment{Decode: d, Tool: k.Name, ToolTime: toolTime(r, k, o.ToolMaxTime), ToolReturn: ret})
			ctx += d + ret
		}
		segs = append(segs, Segment{Decode: decs[0]})
		decs, rets = decs[1:], rets[1:]
		ps[i] = Program{ID: fmt.Sprintf("coding-%04d", i), Calls: splitSession(segs, firsts[i], o.ToolsPerCall)}
	}
	return finish(&Workload{Name: "coding",
		Description: fmt.Sprintf("synthetic long-context coding agents (%g tool calls in [%d, %d], first prompt %g tokens, context <= %d, tool results %g tokens)",
			o.ToolCallsMean, o.ToolCallsMin, o.ToolCallsMax, o.FirstPromptMean, o.MaxContext, o.ToolReturnMean),
		Programs: ps})
}

// splitSession turns a session's segments into calls of at most per tool
// calls each (0: one call), each later call continuing the previous one's
// context with the tool's result as its new tokens.
func splitSession(segs []Segment, first, per int) []Call {
	if per <= 0 || len(segs)-1 <= per {
		return []Call{{ID: "c0", Thread: "main", NewTokens: first, Segments: segs}}
	}
	var calls []Call
	newTokens := first
	var think float64
	var tool string
	for len(segs) > 0 {
		n := min(per, len(segs)-1)
		c := Call{ID: fmt.Sprintf("c%d", len(calls)), Thread: "main", NewTokens: newTokens, ThinkTime: think, ThinkTool: tool}
		if len(calls) > 0 {
			c.Parents, c.ContinueParent = []string{calls[len(calls)-1].ID}, true
		}
		if n == len(segs)-1 { // the rest, with the answer
			c.Segments = segs
			calls = append(calls, c)
			break
		}
		// The n-th tool call ends this call: the client runs it, and its
		// result opens the next call.
		last := segs[n-1]
		c.Segments = append(append([]Segment{}, segs[:n-1]...), Segment{Decode: last.Decode})
		calls = append(calls, c)
		newTokens, think, tool = last.ToolReturn, last.ToolTime, last.Tool
		segs = segs[n:]
	}
	return calls
}

func pickTool(r *rand.Rand, tools []ToolKind) ToolKind {
	total := 0.0
	for _, t := range tools {
		total += t.Weight
	}
	u := r.Float64() * total
	for _, t := range tools {
		if u < t.Weight {
			return t
		}
		u -= t.Weight
	}
	return tools[len(tools)-1]
}

// toolTime draws a lognormal duration around k's median, in [1 ms, maxTime].
func toolTime(r *rand.Rand, k ToolKind, maxTime float64) float64 {
	return min(max(k.Median*math.Exp(k.Sigma*r.NormFloat64()), 0.001), maxTime)
}
