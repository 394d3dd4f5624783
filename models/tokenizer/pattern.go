package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// The standard byte-level pre-tokenizer patterns. They need lookahead
// (`\s+(?!\S)`), which Go's regexp lacks; each has a hand-written scanner
// (below) that the tests check against the regexp2 engine on fixed and fuzzed
// input. Any other pattern found in a tokenizer.json runs on regexp2.
const (
	// PatternGPT2 is the GPT-2 split, built into the ByteLevel pre-tokenizer
	// (use_regex: true).
	PatternGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	// PatternLlama3 is the Llama 3 split (also OpenAI's cl100k): case-insensitive
	// contractions, digits in runs of at most three.
	PatternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// PatternQwen2 is the Qwen2 / Qwen2.5 split: as Llama 3 but single digits.
	PatternQwen2 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// matcher finds the non-overlapping matches of a pattern in s, as byte
// ranges in order.
type matcher interface {
	find(s string) [][2]int
}

// compilePattern returns a scanner for the standard patterns and a regexp2
// matcher for anything else.
func compilePattern(pattern string) (matcher, error) {
	switch pattern {
	case PatternGPT2:
		return scanMatcher{gpt2Next}, nil
	case PatternLlama3:
		return scanMatcher{func(r []rune, i int) int { return llamaNext(r, i, 3) }}, nil
	case PatternQwen2:
		return scanMatcher{func(r []rune, i int) int { return llamaNext(r, i, 1) }}, nil
	}
	return compileRegexp2(pattern)
}

func compileRegexp2(pattern string) (matcher, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compile pattern %q: %w", pattern, err)
	}
	return regexpMatcher{re}, nil
}

// decodeRunes splits s into runes and the byte offset of each (plus len(s)
// at the end). Invalid bytes become U+FFFD, one per byte, exactly as a Go
// []rune conversion does, so rune indexes map back to bytes.
func decodeRunes(s string) ([]rune, []int) {
	runes := make([]rune, 0, len(s))
	offs := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		runes = append(runes, r)
		offs = append(offs, i)
		i += w
	}
	offs = append(offs, len(s))
	return runes, offs
}

type regexpMatcher struct{ re *regexp2.Regexp }

func (m regexpMatcher) find(s string) [][2]int {
	runes, offs := decodeRunes(s)
	var out [][2]int
	match, err := m.re.FindRunesMatch(runes)
	for err == nil && match != nil {
		if match.Length > 0 {
			out = append(out, [2]int{offs[match.Index], offs[match.Index+match.Length]})
		}
		match, err = m.re.FindNextMatch(match)
	}
	// regexp2 only errors on a match timeout, which is not set here.
	return out
}

// scanMatcher runs a hand-written scanner: next(runes, i) is the end of the
// match starting at rune i (the standard patterns match at every position).
type scanMatcher struct {
	next func(r []rune, i int) int
}

func (m scanMatcher) find(s string) [][2]int {
	runes, offs := decodeRunes(s)
	out := make([][2]int, 0, len(runes)/3+1)
	for i := 0; i < len(runes); {
		j := m.next(runes, i)
		out = append(out, [2]int{offs[i], offs[j]})
		i = j
	}
	return out
}

func isL(r rune) bool { return unicode.IsLetter(r) }
func isN(r rune) bool { return unicode.IsNumber(r) }
func isS(r rune) bool { return unicode.IsSpace(r) }

// isOther is [^\s\p{L}\p{N}].
func isOther(r rune) bool { return !isS(r) && !isL(r) && !isN(r) }

func at(r []rune, i int) rune {
	if i < len(r) {
		return r[i]
	}
	return -1
}

func runOf(r []rune, i int, f func(rune) bool) int {
	for i < len(r) && f(r[i]) {
		i++
	}
	return i
}

// contraction matches 's 't 're 've 'm 'll 'd at i and returns its end, or
// -1. fold makes the letters case-insensitive (ASCII folding, as regexp2 and
// Oniguruma do for these letters).
func contraction(r []rune, i int, fold bool) int {
	if at(r, i) != '\'' {
		return -1
	}
	lower := func(c rune) rune {
		if fold && c >= 'A' && c <= 'Z' {
			return c + ('a' - 'A')
		}
		return c
	}
	c1, c2 := lower(at(r, i+1)), lower(at(r, i+2))
	switch c1 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if c2 == 'e' {
			return i + 3
		}
	case 'l':
		if c2 == 'l' {
			return i + 3
		}
	}
	return -1
}

// whitespaceTail handles `\s+(?!\S)|\s+` at a whitespace rune i.
func whitespaceTail(r []rune, i int) int {
	j := runOf(r, i, isS)
	if j == len(r) || j-i == 1 {
		return j
	}
	return j - 1 // leave the last space to prefix the next token
}

// gpt2Next: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func gpt2Next(r []rune, i int) int {
	if j := contraction(r, i, false); j > 0 {
		return j
	}
	c := r[i]
	start := i
	if c == ' ' && i+1 < len(r) && !isS(r[i+1]) {
		start = i + 1
		c = r[start]
	}
	switch {
	case isL(c):
		return runOf(r, start, isL)
	case isN(c):
		return runOf(r, start, isN)
	case isOther(c):
		return runOf(r, start, isOther)
	}
	return whitespaceTail(r, i)
}

func isCRLF(c rune) bool { return c == '\r' || c == '\n' }

// llamaNext: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func llamaNext(r []rune, i int, maxDigits int) int {
	if j := contraction(r, i, true); j > 0 {
		return j
	}
	c := r[i]
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isL(c) {
		return runOf(r, i, isL)
	}
	if !isCRLF(c) && !isN(c) && i+1 < len(r) && isL(r[i+1]) {
		return runOf(r, i+1, isL)
	}
	// \p{N}{1,maxDigits}
	if isN(c) {
		j := i
		for j < len(r) && j-i < maxDigits && isN(r[j]) {
			j++
		}
		return j
	}
	// ?[^\s\p{L}\p{N}]+[\r\n]*
	start := i
	if c == ' ' && i+1 < len(r) && isOther(r[i+1]) {
		start = i + 1
	}
	if isOther(r[start]) {
		j := runOf(r, start, isOther)
		return runOf(r, j, isCRLF)
	}
	// \s*[\r\n]+ : up to and including the last CR/LF of the whitespace run.
	j := runOf(r, i, isS)
	for k := j - 1; k >= i; k-- {
		if isCRLF(r[k]) {
			return k + 1
		}
	}
	return whitespaceTail(r, i)
}
