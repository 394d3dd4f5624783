package remote

import (
	"encoding/json"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// Request is one generation: continue this conversation.
type Request struct {
	// Model is the model id asked for ("": the backend's first model).
	Model string
	// Program is the program's key (tenant-scoped); it keys the affinity
	// and the rank. ProgramID and Thread are the ids the client gave,
	// passed on to pitstop backends.
	Program, ProgramID, Thread string
	Messages                   []chat.Message
	Tools                      []chat.Tool
	// ToolChoice is OpenAI's tool_choice as JSON (nil: not sent).
	ToolChoice        json.RawMessage
	ParallelToolCalls *bool
	MaxTokens         int
	Temperature, TopP *float64
	Seed              *int64
	Stop              []string
	// ResponseFormat is OpenAI's response_format as JSON (nil: not sent).
	ResponseFormat json.RawMessage
	// CacheSalt is sent as cache_salt to the backends that take it (vLLM,
	// pitstop): a backend sees one client, the router, so without it the
	// router's tenants would share its prefix cache. Empty: none sent.
	CacheSalt string
	// PromptTokens estimates the conversation's length in tokens, for the
	// balancer; PredictedDecode the tokens the call will write.
	PromptTokens, PredictedDecode int
	// Exclude are backends the call must not go to (by name).
	Exclude map[string]bool
	// Buffered holds a reply's events until it is complete (a client that
	// does not stream): a backend that fails midway then moves the
	// generation like one that failed before any output.
	Buffered bool

	// sent is the encoding of the last generation's messages, for the
	// next generation of this Request (a tool round's continuation).
	sent sentConversation
}

// Usage is what a backend reported of a reply's tokens.
type Usage struct {
	PromptTokens, CompletionTokens int
	// CachedTokens are the prompt tokens the backend found in its prefix
	// cache (usage.prompt_tokens_details.cached_tokens); -1 when the
	// backend does not report them.
	CachedTokens int
}

// Reply is a backend's complete answer to one generation.
type Reply struct {
	Backend      string // the backend's name
	Model        string
	Content      string
	ToolCalls    []chat.ToolCall
	FinishReason string
	Usage        Usage
}
