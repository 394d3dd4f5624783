package runtime

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
	"github.com/pitstop-llm/pitstop/runtime/testmodel"
)

// Turn is what a model reads before writing its next assistant turn.
type Turn struct {
	Messages          []chat.Message
	Tools             []chat.Tool // tools offered to the model
	ToolChoice        ToolChoice
	ParallelToolCalls bool
	// ResponseFormat is the request's (nil: text).
	ResponseFormat *ResponseFormat
}

// Model is what the runtime serves: a chat template, a tokenizer and, for a
// scripted model, the tokens it writes. The executor runs the forward pass;
// the runtime feeds every token the model writes through the tokenizer's
// streaming decoder and the template's streaming tool-call parser.
type Model interface {
	// Name is the model id clients ask for.
	Name() string
	Template() chat.Template
	Tokenizer() *tokenizer.Tokenizer
	// Script returns the tokens the model writes for its next turn, ending
	// with a stop token, when the model is scripted; nil means the
	// executor's sampled tokens are the model's output. It is called on the
	// engine goroutine and must be quick.
	Script(t *Turn) []int32
}

// scriptedModel adapts the scripted test model (package testmodel).
type scriptedModel struct {
	m   *testmodel.Model
	end int32
}

// NewScriptedTestModel returns the built-in SCRIPTED TEST MODEL: not a
// language model, for tests only (see package testmodel for its rules).
func NewScriptedTestModel() (Model, error) {
	m, err := testmodel.New()
	if err != nil {
		return nil, err
	}
	end, ok := m.Tokenizer().TokenID(testmodel.ImEnd)
	if !ok {
		return nil, fmt.Errorf("runtime: scripted model has no %s token", testmodel.ImEnd)
	}
	return &scriptedModel{m: m, end: end}, nil
}

func (s *scriptedModel) Name() string                    { return s.m.Name() }
func (s *scriptedModel) Template() chat.Template         { return s.m.Template() }
func (s *scriptedModel) Tokenizer() *tokenizer.Tokenizer { return s.m.Tokenizer() }

// WithFormat is c with the response format's JSON answer.
func withFormat(c testmodel.Conversation, rf *ResponseFormat) testmodel.Conversation {
	if rf != nil && (rf.Type == "json_object" || rf.Type == "json_schema") {
		c.JSON, c.Schema = true, rf.Schema
	}
	return c
}

// Script writes the reply as a model would: the template's tool-call tags
// as their special tokens, the reply's text (content, the calls' JSON) as
// text, so that a reply that spells a tag is text.
func (s *scriptedModel) Script(t *Turn) []int32 {
	reply := s.m.ReplyRendered(withFormat(testmodel.Conversation{
		Messages: t.Messages,
		Tools:    t.Tools,
		Choice:   testmodel.Choice{Mode: string(t.ToolChoice.Mode), Name: t.ToolChoice.Name},
		Parallel: t.ParallelToolCalls,
	}, t.ResponseFormat))
	toks, err := reply.Encode(s.m.Tokenizer())
	if err != nil {
		// The spans come from the template and are always in order; text
		// alone is the safe reading if they ever are not.
		toks = s.m.Tokenizer().Encode(reply.Text, false)
	}
	return append(toks, s.end)
}
