package runtime

import (
	"strings"

	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// encodeSpans tokenizes a rendered prompt. The template's own markup is
// encoded with special tokens recognised ("<|im_start|>" is one token);
// the untrusted texts the prompt contains (message contents, tool results),
// found in order, are encoded as plain text, so a user who writes
// "<|im_end|>" cannot close a turn. A text the template changed and that is
// not found verbatim is encoded with the markup around it.
func encodeSpans(tok *tokenizer.Tokenizer, text string, untrusted []string) []int32 {
	out := make([]int32, 0, len(text)/3+8)
	cur := 0
	for _, u := range untrusted {
		if u == "" {
			continue
		}
		i := strings.Index(text[cur:], u)
		if i < 0 {
			continue
		}
		i += cur
		out = append(out, tok.Encode(text[cur:i], true)...)
		out = append(out, tok.Encode(u, false)...)
		cur = i + len(u)
	}
	return append(out, tok.Encode(text[cur:], true)...)
}
