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
	ContinueParent    bool
	SharedPrefix      []uint64 // ids of prompt chunks shared across requests (mooncake hash_ids); equal ids = equal tokens
	SharedPrefixBlock int      // tokens per SharedPrefix id (mooncake: 512); the last chunk may be cut by NewTokens accounting
	NewTokens         int      // prompt tokens of this call not shared with anything else

	ThinkTime float64   // seconds between the parents' completion (or program arrival) and this call's arrival
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
}
