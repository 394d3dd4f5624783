package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// AddedToken is an entry of tokenizer.json's added_tokens: a string matched
// whole in the input before any pre-tokenization.
type AddedToken struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// addedMatcher finds added tokens in text, leftmost then longest.
type addedMatcher struct {
	toks    []AddedToken
	byFirst [256][]int // indexes into toks, longest content first
}

func newAddedMatcher(toks []AddedToken, withSpecial bool) *addedMatcher {
	m := &addedMatcher{}
	for _, t := range toks {
		if t.Content == "" || (t.Special && !withSpecial) {
			continue
		}
		m.toks = append(m.toks, t)
	}
	for i, t := range m.toks {
		b := t.Content[0]
		m.byFirst[b] = append(m.byFirst[b], i)
	}
	for b := range m.byFirst {
		l := m.byFirst[b]
		sort.SliceStable(l, func(i, j int) bool { return len(m.toks[l[i]].Content) > len(m.toks[l[j]].Content) })
	}
	return m
}

// segment is a run of plain text (id < 0) or one added token.
type segment struct {
	text string
	id   int32
}

func (m *addedMatcher) empty() bool { return len(m.toks) == 0 }

// split cuts text into plain runs and added tokens. lstrip/rstrip tokens
// swallow the whitespace beside them; single_word tokens match only between
// whitespace (or the text's ends).
func (m *addedMatcher) split(text string) []segment { return m.splitReject(text, nil) }

// splitReject is split where reject, when not nil, may refuse a match at
// text[start:end] (candidates are tried at increasing starts).
func (m *addedMatcher) splitReject(text string, reject func(start, end int, t *AddedToken) bool) []segment {
	if m.empty() {
		return []segment{{text, -1}}
	}
	var segs []segment
	plainStart := 0
	for i := 0; i < len(text); {
		cands := m.byFirst[text[i]]
		found := -1
		for _, c := range cands {
			t := &m.toks[c]
			if !strings.HasPrefix(text[i:], t.Content) {
				continue
			}
			if t.SingleWord && !singleWordOK(text, i, i+len(t.Content)) {
				continue
			}
			if reject != nil && reject(i, i+len(t.Content), t) {
				continue
			}
			found = c
			break
		}
		if found < 0 {
			i++
			continue
		}
		t := m.toks[found]
		start, end := i, i+len(t.Content)
		if t.LStrip {
			for start > plainStart {
				r, w := utf8.DecodeLastRuneInString(text[plainStart:start])
				if !unicode.IsSpace(r) {
					break
				}
				start -= w
			}
		}
		if t.RStrip {
			for end < len(text) {
				r, w := utf8.DecodeRuneInString(text[end:])
				if !unicode.IsSpace(r) {
					break
				}
				end += w
			}
		}
		if start > plainStart {
			segs = append(segs, segment{text[plainStart:start], -1})
		}
		segs = append(segs, segment{t.Content, t.ID})
		plainStart, i = end, end
	}
	if plainStart < len(text) {
		segs = append(segs, segment{text[plainStart:], -1})
	}
	return segs
}

func singleWordOK(text string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:start])
		if !unicode.IsSpace(r) {
			return false
		}
	}
	if end < len(text) {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}
