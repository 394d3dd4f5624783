package api

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/runtime"
)

// HeaderStreamProgress, set to a true value ("1", "true") on a streamed
// chat completion, asks for the server-side tool rounds as they happen:
// when the model's tool calls pause the call (a "pitstop" chunk with
// tool_round_start: the calls, the handling decision and why, the
// predicted duration) and when the tools have returned (the tool_round
// chunk, written at once instead of with the next output). The stream is
// then committed (status 200) at the first round, so an error after it
// (the loop guard, say) arrives as an SSE error event, which go-openai
// reports, rather than as an HTTP status.
const HeaderStreamProgress = "X-Pitstop-Stream-Progress"

// streamProgress reports whether the request asks for HeaderStreamProgress.
func streamProgress(c echo.Context) bool {
	v, err := strconv.ParseBool(c.Request().Header.Get(HeaderStreamProgress))
	return err == nil && v
}

// roundStartChunk is the extension chunk of a tool round that starts: no
// choices (like the usage chunk), and the round under
// "pitstop"."tool_round_start".
type roundStartChunk struct {
	chunk
	Pitstop struct {
		ToolRoundStart *runtime.Round `json:"tool_round_start"`
	} `json:"pitstop"`
}

// roundStart writes the start of a tool round, in progress mode only
// (otherwise the round's chunk, written when it ends, says it all).
func (w *sseWriter) roundStart(r *runtime.Round) {
	if !w.progress || r == nil {
		return
	}
	w.commitRounds()
	ch := roundStartChunk{chunk: chunk{ID: w.call.ID(), Object: "chat.completion.chunk", Created: w.created,
		Model: w.model, SystemFingerprint: fingerprint, Choices: []chunkChoice{}}}
	ch.Pitstop.ToolRoundStart = r
	w.encode(ch)
}

// progressRounds writes the finished rounds at once in progress mode.
func (w *sseWriter) progressRounds() {
	if w.progress && len(w.rounds) > 0 {
		w.commitRounds()
	}
}
