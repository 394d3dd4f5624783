package runtime

import "github.com/pitstop-llm/pitstop/models/tokenizer"

// promptTooLong refuses a conversation that cannot fit the prompt limit
// before it is rendered or tokenized, so that a huge body costs its bytes
// and no more: a token covers at most maxTokenBytes bytes of text, so a
// prompt of B bytes has at least B/maxTokenBytes tokens. The bound counts
// only what becomes text tokens (contents, tool-call arguments, tool
// schemas) and is halved once more for normalizers that shrink text (NFKC
// folds some 3-byte ligatures into 2 bytes), so it never refuses a prompt
// that would fit; prompts near the limit are still measured exactly after
// tokenizing.
func (rt *Runtime) promptTooLong(req ChatRequest) *Error {
	if rt.maxTokenBytes <= 0 {
		return nil
	}
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, tc := range m.ToolCalls {
			n += len(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Description) + len(t.Parameters)
	}
	atLeast := n / (2 * rt.maxTokenBytes)
	if atLeast <= rt.maxPrompt {
		return nil
	}
	return errorf(ErrContextLength, "messages", "context_length_exceeded",
		"This model's maximum context length is %d tokens; your messages are %d bytes, which is at least %d tokens.", rt.maxPrompt, n, atLeast)
}

// longestToken returns the most bytes of text one ordinary (not special)
// token stands for.
func longestToken(tok *tokenizer.Tokenizer) int {
	longest := 0
	for id := range int32(tok.VocabSize()) {
		if !tok.IsSpecial(id) {
			longest = max(longest, len(tok.TokenBytes(id)))
		}
	}
	return longest
}
