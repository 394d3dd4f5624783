package tokenizer

import "strings"

// EncodeSpans tokenizes a rendered chat prompt. The template's own markup is
// encoded with special tokens recognised ("<|im_start|>" is one token); the
// untrusted texts the prompt contains (message contents, tool results),
// found in order, are encoded as plain text, so a user who writes
// "<|im_end|>" cannot close a turn. A text the template changed and that is
// not found verbatim is encoded with the markup around it.
//
// Known weakness: texts are found by searching from the previous match, so a
// short text that also occurs in earlier markup (a tool name in the tools
// block) is matched there. Templates reporting their content spans would fix
// it; the server and the tiny model's training share this one function so
// that both see the same tokens.
func (t *Tokenizer) EncodeSpans(text string, untrusted []string) []int32 {
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
		out = append(out, t.Encode(text[cur:i], true)...)
		out = append(out, t.Encode(u, false)...)
		cur = i + len(u)
	}
	return append(out, t.Encode(text[cur:], true)...)
}
