package workload

import (
	"fmt"
	"slices"
	"strings"
)

// Summary describes what a workload replays; pitstop bench prints it.
type Summary struct {
	Name        string
	Timestamped bool
	Programs    int
	Calls       int
	Segments    int
	// ToolCalls counts segments that end in a tool call inside a call (the runtime
	// intercepts these); Pauses counts calls that start after a ThinkTime > 0 (a person, or
	// a client-side tool between two calls).
	ToolCalls int
	Pauses    int

	MeanCallsPerProgram float64
	MaxCallsPerProgram  int
	MeanPrompt          float64 // whole prompt per call: continued context + prefix + NewTokens
	MeanNewTokens       float64 // NewTokens + shared-prefix tokens per call (what a call adds)
	MeanDecode          float64 // decode tokens per call, all segments
	MeanSegmentDecode   float64 // decode tokens per segment
	MeanToolTime        float64 // seconds per tool call (in-call)
	MeanToolReturn      float64 // tokens per tool call (in-call)
	MeanThinkTime       float64 // seconds per pause
	Span                float64 // seconds from the first to the last arrival (timestamped workloads)

	// Tools has one line per tool name, in-call tools and ThinkTool pauses together, sorted by name.
	Tools []ToolSummary
}

// ToolSummary is the count and mean duration of one tool (or pause kind).
type ToolSummary struct {
	Name         string
	InCall       int     // segments ending in this tool
	BetweenCalls int     // pauses with this ThinkTool
	MeanTime     float64 // seconds, over both
	MeanReturn   float64 // tokens the in-call tool returns, or NewTokens of the call after the pause
}

// Stats summarises a workload. Prompt lengths follow Program.Contexts (a valid workload).
func Stats(w *Workload) Summary {
	s := Summary{Name: w.Name, Timestamped: w.Timestamped, Programs: len(w.Programs)}
	var prompt, newTok, decode, toolTime, toolRet, think float64
	type acc struct {
		in, between int
		time, ret   float64
	}
	tools := map[string]*acc{}
	tool := func(name string) *acc {
		a := tools[name]
		if a == nil {
			a = &acc{}
			tools[name] = a
		}
		return a
	}
	for pi := range w.Programs {
		p := &w.Programs[pi]
		s.Calls += len(p.Calls)
		s.MaxCallsPerProgram = max(s.MaxCallsPerProgram, len(p.Calls))
		prompts, _ := p.Contexts()
		for ci := range p.Calls {
			c := &p.Calls[ci]
			prompt += float64(prompts[ci])
			newTok += float64(c.NewTokens + c.PromptFromPrefix())
			if c.ThinkTime > 0 {
				s.Pauses++
				think += c.ThinkTime
			}
			if c.ThinkTool != "" {
				a := tool(c.ThinkTool)
				a.between++
				a.time += c.ThinkTime
				a.ret += float64(c.NewTokens)
			}
			s.Segments += len(c.Segments)
			for _, sg := range c.Segments {
				decode += float64(sg.Decode)
				if sg.Tool != "" || sg.ToolTime > 0 {
					s.ToolCalls++
					toolTime += sg.ToolTime
					toolRet += float64(sg.ToolReturn)
					a := tool(sg.Tool)
					a.in++
					a.time += sg.ToolTime
					a.ret += float64(sg.ToolReturn)
				}
			}
		}
	}
	div := func(a float64, b int) float64 {
		if b == 0 {
			return 0
		}
		return a / float64(b)
	}
	s.MeanCallsPerProgram = div(float64(s.Calls), s.Programs)
	s.MeanPrompt = div(prompt, s.Calls)
	s.MeanNewTokens = div(newTok, s.Calls)
	s.MeanDecode = div(decode, s.Calls)
	s.MeanSegmentDecode = div(decode, s.Segments)
	s.MeanToolTime = div(toolTime, s.ToolCalls)
	s.MeanToolReturn = div(toolRet, s.ToolCalls)
	s.MeanThinkTime = div(think, s.Pauses)
	if w.Timestamped && len(w.Programs) > 0 {
		s.Span = w.Programs[len(w.Programs)-1].Arrival - w.Programs[0].Arrival
	}
	for name, a := range tools {
		s.Tools = append(s.Tools, ToolSummary{Name: name, InCall: a.in, BetweenCalls: a.between,
			MeanTime: div(a.time, a.in+a.between), MeanReturn: div(a.ret, a.in+a.between)})
	}
	slices.SortFunc(s.Tools, func(a, b ToolSummary) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// String is a few lines for a terminal.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workload %s: %d programs, %d calls (mean %.2f, max %d per program), %d segments, %d tool calls, %d pauses",
		s.Name, s.Programs, s.Calls, s.MeanCallsPerProgram, s.MaxCallsPerProgram, s.Segments, s.ToolCalls, s.Pauses)
	if s.Timestamped {
		fmt.Fprintf(&b, ", timestamped over %.0f s", s.Span)
	}
	fmt.Fprintf(&b, "\n  per call: prompt %.1f tokens (new %.1f), decode %.1f", s.MeanPrompt, s.MeanNewTokens, s.MeanDecode)
	if s.ToolCalls > 0 {
		fmt.Fprintf(&b, "\n  per tool call: %.3f s, returns %.1f tokens", s.MeanToolTime, s.MeanToolReturn)
	}
	if s.Pauses > 0 {
		fmt.Fprintf(&b, "\n  per pause: %.3f s", s.MeanThinkTime)
	}
	for _, t := range s.Tools {
		fmt.Fprintf(&b, "\n  tool %-12s in-call %5d  between-calls %5d  mean %.4g s  returns %.1f tokens", t.Name, t.InCall, t.BetweenCalls, t.MeanTime, t.MeanReturn)
	}
	return b.String()
}
