package tokenizer

import "fmt"

// Span is a byte range [Start, End) of a text given to EncodeSpans whose
// special-token strings are ordinary text: conversation text inside a
// rendered chat prompt, as the chat template reports it.
type Span struct {
	Start, End int
	// Cut tokenizes the span on its own, apart from the text around it, so
	// that no token crosses its ends (the content of a system, user or tool
	// message). Without it the span only switches special tokens off: the
	// text inside and around it is tokenized as one run, exactly as Encode
	// with special tokens would when the span holds no special-token string
	// (the model's own text, tool definitions).
	Cut bool
}

// EncodeSpans tokenizes a rendered chat prompt. The template's own markup is
// encoded with special tokens recognised ("<|im_start|>" is one token); the
// spans, which the template reports as it renders, are encoded as plain
// text, so a user who writes "<|im_end|>" cannot close a turn. Non-special
// added tokens are matched everywhere, as Encode does without special
// tokens. Spans must be in order, must not overlap and must lie within
// text; empty spans are ignored.
func (t *Tokenizer) EncodeSpans(text string, spans []Span) ([]int32, error) {
	prev := 0
	for i, s := range spans {
		if s.Start < prev || s.End < s.Start || s.End > len(text) {
			return nil, fmt.Errorf("tokenizer: span %d [%d,%d) is out of order, overlaps the one before or lies outside the text (%d bytes)", i, s.Start, s.End, len(text))
		}
		prev = s.End
	}
	out := make([]int32, 0, len(text)/3+8)
	cur := 0
	pos := atTextStart // where the text at cur starts, for "▁" prepends
	var guards []Span
	for _, s := range spans {
		if s.Start == s.End {
			continue
		}
		if !s.Cut {
			guards = append(guards, s)
			continue
		}
		out, pos = t.encodeGuarded(text, cur, s.Start, guards, pos, out)
		guards = guards[:0]
		out, pos = t.appendEncode(text[s.Start:s.End], t.plainSpecial, pos, out)
		cur = s.End
	}
	out, _ = t.encodeGuarded(text, cur, len(text), guards, pos, out)
	return out, nil
}

// encodeGuarded encodes text[from:to] with special tokens, except those
// that overlap a guard span (absolute offsets, in order). pos is where
// text[from:] starts; the result says where the text after it starts.
func (t *Tokenizer) encodeGuarded(text string, from, to int, guards []Span, pos segPos, out []int32) ([]int32, segPos) {
	if from >= to {
		return out, pos
	}
	if len(guards) == 0 {
		return t.appendEncode(text[from:to], t.withSpecial, pos, out)
	}
	gi := 0
	reject := func(start, end int, tok *AddedToken) bool {
		if !tok.Special {
			return false
		}
		start, end = start+from, end+from
		for gi < len(guards) && guards[gi].End <= start {
			gi++
		}
		return gi < len(guards) && guards[gi].Start < end
	}
	return t.encodeSegments(t.withSpecial.splitReject(text[from:to], reject), pos, out)
}

// appendEncode is Encode with the matcher m, appending to out, for a text
// starting at pos; it returns where the text after it would start.
func (t *Tokenizer) appendEncode(text string, m *addedMatcher, pos segPos, out []int32) ([]int32, segPos) {
	return t.encodeSegments(m.split(text), pos, out)
}

func (t *Tokenizer) encodeSegments(segs []segment, pos segPos, out []int32) ([]int32, segPos) {
	for _, seg := range segs {
		if seg.id >= 0 {
			out = append(out, seg.id)
			pos = afterAdded
			continue
		}
		out = t.encodePlain(seg.text, pos, out)
		pos = midText
	}
	return out, pos
}
