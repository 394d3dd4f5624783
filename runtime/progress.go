package runtime

import "github.com/pitstop-llm/pitstop/models/chat"

// roundStarted is a tool round as its tools start (DeltaToolRoundStart):
// the round's decision and the calls the model made, without results.
func roundStarted(round Round, calls []chat.ToolCall) *Round {
	r := round
	r.Calls = make([]ToolRun, len(calls))
	for i, c := range calls {
		r.Calls[i] = ToolRun{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	return &r
}
