package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// preStep splits pieces of (normalized) raw text into smaller pieces. Pieces
// stay raw bytes all along; the byte-level mapping is folded into the BPE
// model's initial symbols.
type preStep interface {
	split(pieces []string) []string
}

// splitStep is the Hugging Face Split pre-tokenizer (and Digits).
type splitStep struct {
	m        matcher
	behavior string // Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous
	invert   bool
}

type span struct {
	start, end int
	match      bool
}

func (s splitStep) split(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		out = append(out, s.splitOne(p)...)
	}
	return out
}

func (s splitStep) splitOne(p string) []string {
	if p == "" {
		return nil
	}
	if s.behavior == "Isolated" && !s.invert {
		// Fast path: every match and every gap is a piece.
		ms := s.m.find(p)
		out := make([]string, 0, 2*len(ms)+1)
		prev := 0
		for _, m := range ms {
			if m[0] > prev {
				out = append(out, p[prev:m[0]])
			}
			out = append(out, p[m[0]:m[1]])
			prev = m[1]
		}
		if prev < len(p) {
			out = append(out, p[prev:])
		}
		return out
	}
	var spans []span
	prev := 0
	for _, m := range s.m.find(p) {
		if m[0] > prev {
			spans = append(spans, span{prev, m[0], false})
		}
		spans = append(spans, span{m[0], m[1], true})
		prev = m[1]
	}
	if prev < len(p) {
		spans = append(spans, span{prev, len(p), false})
	}
	if s.invert {
		for i := range spans {
			spans[i].match = !spans[i].match
		}
	}
	var keep []span
	switch s.behavior {
	case "Removed":
		for _, sp := range spans {
			if !sp.match {
				keep = append(keep, sp)
			}
		}
	case "Contiguous":
		for _, sp := range spans {
			if n := len(keep); n > 0 && keep[n-1].match == sp.match {
				keep[n-1].end = sp.end
			} else {
				keep = append(keep, sp)
			}
		}
	case "MergedWithPrevious":
		prevMatch := false
		for _, sp := range spans {
			if sp.match && !prevMatch && len(keep) > 0 {
				keep[len(keep)-1].end = sp.end
			} else {
				keep = append(keep, sp)
			}
			prevMatch = sp.match
		}
	case "MergedWithNext":
		prevMatch := false
		for i := len(spans) - 1; i >= 0; i-- {
			sp := spans[i]
			if sp.match && !prevMatch && len(keep) > 0 {
				keep[len(keep)-1].start = sp.start
			} else {
				keep = append(keep, sp)
			}
			prevMatch = sp.match
		}
		for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
			keep[i], keep[j] = keep[j], keep[i]
		}
	default: // Isolated
		keep = spans
	}
	out := make([]string, 0, len(keep))
	for _, sp := range keep {
		if sp.end > sp.start {
			out = append(out, p[sp.start:sp.end])
		}
	}
	return out
}

// byteLevelStep is the ByteLevel pre-tokenizer: an optional prefix space per
// piece, then (use_regex) the GPT-2 split.
type byteLevelStep struct {
	addPrefixSpace bool
	regex          *splitStep
}

func (b byteLevelStep) split(pieces []string) []string {
	if b.addPrefixSpace {
		for i, p := range pieces {
			if !strings.HasPrefix(p, " ") {
				pieces[i] = " " + p
			}
		}
	}
	if b.regex != nil {
		return b.regex.split(pieces)
	}
	return pieces
}

// runeClassMatcher matches every rune for which f holds, one match per rune
// (the Hugging Face char-predicate pattern; Digits uses it).
type runeClassMatcher struct{ f func(rune) bool }

func (m runeClassMatcher) find(s string) [][2]int {
	var out [][2]int
	for i, r := range s {
		if m.f(r) {
			out = append(out, [2]int{i, i + len(string(r))})
		}
	}
	return out
}

// literalMatcher matches a fixed string (a Split with a String pattern).
type literalMatcher struct{ lit string }

func (m literalMatcher) find(s string) [][2]int {
	var out [][2]int
	if m.lit == "" {
		return nil
	}
	for i := 0; ; {
		j := strings.Index(s[i:], m.lit)
		if j < 0 {
			return out
		}
		out = append(out, [2]int{i + j, i + j + len(m.lit)})
		i += j + len(m.lit)
	}
}

type preTokenizerJSON struct {
	Type             string            `json:"type"`
	AddPrefixSpace   *bool             `json:"add_prefix_space"`
	Replacement      *string           `json:"replacement"`
	PrependScheme    string            `json:"prepend_scheme"`
	Split            *bool             `json:"split"`
	UseRegex         *bool             `json:"use_regex"`
	Pattern          *patternJSON      `json:"pattern"`
	Behavior         string            `json:"behavior"`
	Invert           bool              `json:"invert"`
	Pretokenizers    []json.RawMessage `json:"pretokenizers"`
	IndividualDigits bool              `json:"individual_digits"`
}

type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

var splitBehaviors = map[string]bool{"Isolated": true, "Removed": true, "MergedWithPrevious": true, "MergedWithNext": true, "Contiguous": true}

// preTokenizer is a parsed pre_tokenizer: its steps, whether it is byte
// level (has a ByteLevel step) and its Metaspace step, if any.
type preTokenizer struct {
	steps     []preStep
	byteLevel bool
	meta      *metaspaceStep
}

// parsePreTokenizer flattens the pre_tokenizer tree into steps. No splitting
// step may follow a ByteLevel one (they would see the byte-level string,
// which this package never builds), and a Metaspace step must come first
// (its prepend is applied before any step). A null pre_tokenizer has no
// steps (SentencePiece-style files).
func parsePreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	if isNull(raw) {
		return preTokenizer{}, nil
	}
	var steps []preStep
	var meta *metaspaceStep
	sawByteLevel := false
	var walk func(raw json.RawMessage) error
	walk = func(raw json.RawMessage) error {
		var p preTokenizerJSON
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("pre_tokenizer: %w", err)
		}
		if sawByteLevel && p.Type != "Sequence" {
			return fmt.Errorf("pre_tokenizer %s after ByteLevel is not supported", p.Type)
		}
		switch p.Type {
		case "Sequence":
			for _, sub := range p.Pretokenizers {
				if err := walk(sub); err != nil {
					return err
				}
			}
		case "ByteLevel":
			st := byteLevelStep{addPrefixSpace: p.AddPrefixSpace != nil && *p.AddPrefixSpace}
			if p.UseRegex == nil || *p.UseRegex {
				m, _ := compilePattern(PatternGPT2)
				st.regex = &splitStep{m: m, behavior: "Isolated"}
			}
			steps = append(steps, st)
			sawByteLevel = true
		case "Split":
			if p.Pattern == nil || (p.Pattern.String == nil) == (p.Pattern.Regex == nil) {
				return fmt.Errorf("pre_tokenizer Split: pattern must have exactly one of String or Regex")
			}
			if !splitBehaviors[p.Behavior] {
				return fmt.Errorf("pre_tokenizer Split: unknown behavior %q", p.Behavior)
			}
			st := splitStep{behavior: p.Behavior, invert: p.Invert}
			if p.Pattern.String != nil {
				st.m = literalMatcher{*p.Pattern.String}
			} else {
				m, err := compilePattern(*p.Pattern.Regex)
				if err != nil {
					return fmt.Errorf("pre_tokenizer Split: %w", err)
				}
				st.m = m
			}
			steps = append(steps, st)
		case "Metaspace":
			if len(steps) > 0 {
				return fmt.Errorf("pre_tokenizer Metaspace after another step is not supported")
			}
			m := metaspaceStep{replacement: metaspace, prepend: "always", splitAll: true}
			if p.Replacement != nil {
				m.replacement = *p.Replacement
			}
			if p.PrependScheme != "" {
				m.prepend = p.PrependScheme
			} else if p.AddPrefixSpace != nil && !*p.AddPrefixSpace {
				m.prepend = "never"
			}
			if p.Split != nil {
				m.splitAll = *p.Split
			}
			if m.replacement == "" || (m.prepend != "always" && m.prepend != "first" && m.prepend != "never") {
				return fmt.Errorf("pre_tokenizer Metaspace: replacement %q, prepend_scheme %q (want a non-empty replacement and always, first or never)", m.replacement, m.prepend)
			}
			meta = &m
			steps = append(steps, m)
		case "Digits":
			b := "Contiguous"
			if p.IndividualDigits {
				b = "Isolated"
			}
			steps = append(steps, splitStep{m: runeClassMatcher{unicode.IsNumber}, behavior: b})
		default:
			return fmt.Errorf("pre_tokenizer type %q is not supported (supported: ByteLevel, Metaspace, Split, Digits, Sequence)", p.Type)
		}
		return nil
	}
	if err := walk(raw); err != nil {
		return preTokenizer{}, err
	}
	if sawByteLevel && meta != nil {
		return preTokenizer{}, fmt.Errorf("pre_tokenizer has both ByteLevel and Metaspace steps")
	}
	return preTokenizer{steps: steps, byteLevel: sawByteLevel, meta: meta}, nil
}

// normalizer transforms a run of raw text before pre-tokenization;
// boundary says whether the run starts the text or follows an added token
// (only there does Prepend add its prefix).
type normalizer func(s string, boundary bool) string

type normalizerJSON struct {
	Type        string            `json:"type"`
	Normalizers []json.RawMessage `json:"normalizers"`
	Prepend     string            `json:"prepend"`
	Pattern     *patternJSON      `json:"pattern"`
	Content     string            `json:"content"`
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var n normalizerJSON
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	plain := func(f func(string) string) normalizer { return func(s string, _ bool) string { return f(s) } }
	switch n.Type {
	case "NFC":
		return plain(norm.NFC.String), nil
	case "NFD":
		return plain(norm.NFD.String), nil
	case "NFKC":
		return plain(norm.NFKC.String), nil
	case "NFKD":
		return plain(norm.NFKD.String), nil
	case "Lowercase":
		return plain(strings.ToLower), nil
	case "Prepend":
		return func(s string, boundary bool) string {
			if s == "" || !boundary {
				return s
			}
			return n.Prepend + s
		}, nil
	case "Replace":
		if n.Pattern == nil || n.Pattern.String == nil || n.Pattern.Regex != nil {
			return nil, fmt.Errorf("normalizer Replace: only a String pattern is supported")
		}
		from, to := *n.Pattern.String, n.Content
		if from == "" {
			return nil, fmt.Errorf("normalizer Replace: empty pattern")
		}
		return plain(func(s string) string { return strings.ReplaceAll(s, from, to) }), nil
	case "Sequence":
		var fs []normalizer
		for _, sub := range n.Normalizers {
			f, err := parseNormalizer(sub)
			if err != nil {
				return nil, err
			}
			if f != nil {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			return nil, nil
		}
		return func(s string, boundary bool) string {
			for _, f := range fs {
				s = f(s, boundary)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("normalizer type %q is not supported (supported: NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Sequence)", n.Type)
}

type decoderJSON struct {
	Type     string            `json:"type"`
	Decoders []json.RawMessage `json:"decoders"`
}

// checkDecoder accepts the decoders that this package's decoding
// implements: ByteLevel for byte-level vocabularies; for SentencePiece ones
// the "▁" -> " " Replace, ByteFallback, Fuse, Metaspace and Strip (the
// leading-space Strip is not applied: generated text continues a prompt).
func checkDecoder(raw json.RawMessage, pieces bool) error {
	if isNull(raw) {
		return nil
	}
	var d decoderJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("decoder: %w", err)
	}
	switch d.Type {
	case "ByteLevel":
		if !pieces {
			return nil
		}
	case "Replace", "ByteFallback", "Fuse", "Strip", "Metaspace":
		if pieces {
			return nil
		}
	case "Sequence":
		for _, sub := range d.Decoders {
			if err := checkDecoder(sub, pieces); err != nil {
				return err
			}
		}
		return nil
	}
	if pieces {
		return fmt.Errorf("decoder type %q is not supported for a SentencePiece-style vocabulary (supported: Replace, ByteFallback, Fuse, Strip, Metaspace)", d.Type)
	}
	return fmt.Errorf("decoder type %q is not supported for a byte-level vocabulary (only ByteLevel)", d.Type)
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}
