// Package workload describes agent programs as the benchmarks replay them:
// programs made of calls, calls made of segments separated by tool calls.
// It knows nothing of the engine; bench's driver turns these into engine
// requests with token contents that make prefix sharing real.
package workload

// Segment is one stretch of generation inside a call, ended by a tool call
// (Tool != "" or ToolTime > 0) or, for the last segment, by the call's end.
type Segment struct {
	Decode     int     // tokens the model generates in this segment (the pre-API output length)
	Tool       string  // tool (API) name or family; "" for the last segment
	ToolTime   float64 // seconds the tool (or a human, for think-time pauses) takes
	ToolReturn int     // tokens the tool's result appends to the context before generation resumes
}

// Call is one LLM call of a program (one chat completion).
type Call struct {
	ID      string   // unique inside the program
	Thread  string   // thread of the program this call belongs to (for DAG programs)
	Parents []string // IDs of calls that must finish before this one starts; empty = starts at program arrival

	// Prompt = (the final context of the first parent, if ContinueParent) + SharedPrefix blocks + NewTokens.
	// Every SharedPrefix id stands for a full block; the loaders count a trace's partial last
	// block in NewTokens (see MooncakeConv), so the prompt length is exact.
	ContinueParent    bool
	SharedPrefix      []uint64 // ids of prompt chunks shared across requests (mooncake hash_ids); equal ids = equal tokens
	SharedPrefixBlock int      // tokens per SharedPrefix id (mooncake: 512); every id is a full block
	NewTokens         int      // prompt tokens of this call not shared with anything else

	// A call that continues its first parent sees that parent's whole final context (prompt,
	// every segment's decode and tool return) as the start of its prompt, so a conversation or
	// a ReAct loop carries its history; Program.Contexts computes the lengths.

	ThinkTime float64 // seconds between the parents' completion (or program arrival) and this call's arrival
	// ThinkTool names what fills ThinkTime: a client-side tool run between two calls of a
	// program ("qa", "math", … as in the infercept set), "human-think" for a person, "" when
	// unknown or when there is no pause. Only statistics and predictors read it.
	ThinkTool string
	Segments  []Segment // at least one; all but the last end in a tool call
}

// PromptFromPrefix is the number of prompt tokens the SharedPrefix ids cover.
func (c *Call) PromptFromPrefix() int { return len(c.SharedPrefix) * c.SharedPrefixBlock }

// Program is one agent program (or, for tool-less traces, one request).
type Program struct {
	ID      string
	Arrival float64 // seconds from trace start, used when the workload has its own timestamps
	Calls   []Call  // in a valid topological order (parents before children)
}

// Workload is a named population of programs to sample from.
type Workload struct {
	Name        string
	Description string
	// Timestamped: programs carry real arrival times (Program.Arrival); otherwise arrivals are
	// generated (Poisson) and programs are sampled with replacement from Programs.
	Timestamped bool
	Programs    []Program
	// Notes says how the loader handled what the source data did not fit (dropped or
	// clamped values, broken invariants), one sentence each, for reports to print.
	Notes []string
}

// Contexts returns, for each call of a valid program (see Validate), its prompt length when it
// starts (the first parent's final context if ContinueParent, plus the prefix blocks, plus
// NewTokens) and its final context length when it ends (the prompt plus every segment's Decode
// and every tool's ToolReturn). A parent that is missing counts as an empty context.
func (p *Program) Contexts() (prompt, final []int) {
	prompt = make([]int, len(p.Calls))
	final = make([]int, len(p.Calls))
	idx := make(map[string]int, len(p.Calls))
	for i := range p.Calls {
		c := &p.Calls[i]
		n := c.PromptFromPrefix() + c.NewTokens
		if c.ContinueParent && len(c.Parents) > 0 {
			if j, ok := idx[c.Parents[0]]; ok {
				n += final[j]
			}
		}
		prompt[i] = n
		for _, s := range c.Segments {
			n += s.Decode + s.ToolReturn
		}
		final[i] = n
		idx[c.ID] = i
	}
	return prompt, final
}
