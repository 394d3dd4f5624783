package predictor

import (
	"unicode"
	"unicode/utf8"
)

// TokenCounter counts the tokens of a text.
type TokenCounter func(string) int

// ApproxTokens estimates the number of GPT-2 byte-level BPE tokens (r50k_base,
// the GPT-J tokenizer InferCept counted with) of s without the vocabulary. It
// is used by the converters for traces that carry text but no token counts;
// records it produced say so (TraceRecord.TokensApprox).
//
// The rule follows GPT-2's pre-tokenizer (a word with its leading space, a run
// of digits, a run of other symbols, whitespace) and prices each piece:
//
//   - a run of ASCII letters of length n (with its leading space): 1 token up
//     to 8 letters, then one more per 6 letters: 1 + ceil((n−8)/6);
//   - an apostrophe contraction ('s 't 're 've 'm 'll 'd): 1 token;
//   - a run of digits: 1 token per 2 digits (ceil(n/2));
//   - a run of ASCII symbols: 1 token per 3 symbols (ceil(n/3));
//   - a newline: 1 token, but two in a row make 1 ("\n\n" is one GPT-2 token);
//     each space beyond the one a word carries: 1 token;
//   - any non-ASCII character: 1 token per 2 bytes of its UTF-8 encoding,
//     rounded up over each run.
//
// Calibrated against the real r50k_base counts (npm gpt-tokenizer) on the
// InferCept text segments and the BFCL prompts and calls shipped here: see
// predictor/data/README.md for the measured error.
func ApproxTokens(s string) int {
	tokens := 0
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case isASCIILetter(c):
			j := i
			for j < len(s) && isASCIILetter(s[j]) {
				j++
			}
			tokens += letterRunTokens(j - i)
			i = j
		case c == '\'' && i+1 < len(s) && isASCIILetter(s[i+1]):
			if n := contraction(s[i+1:]); n > 0 {
				tokens++
				i += 1 + n
			} else {
				tokens++ // the apostrophe
				i++
			}
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			tokens += (j - i + 1) / 2
			i = j
		case c == '\n':
			j := i
			for j < len(s) && s[j] == '\n' {
				j++
			}
			tokens += (j - i + 1) / 2
			i = j
		case c == ' ' || c == '\t' || c == '\r':
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r') {
				j++
			}
			// The last space goes with the next word or symbol.
			extra := j - i
			if j < len(s) && s[j] != '\n' {
				extra--
			}
			tokens += extra
			i = j
		case c < utf8.RuneSelf:
			j := i
			for j < len(s) && s[j] < utf8.RuneSelf && isASCIISymbol(s[j]) && !(s[j] == '\'' && j+1 < len(s) && isASCIILetter(s[j+1])) {
				j++
			}
			if j == i {
				j++ // control characters
			}
			tokens += (j - i + 2) / 3
			i = j
		default:
			j := i
			for j < len(s) && s[j] >= utf8.RuneSelf {
				_, size := utf8.DecodeRuneInString(s[j:])
				j += size
			}
			tokens += (j - i + 1) / 2
			i = j
		}
	}
	return tokens
}

func letterRunTokens(n int) int {
	if n <= 8 {
		return 1
	}
	return 1 + (n-8+5)/6
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func isASCIISymbol(c byte) bool {
	return c > ' ' && c < utf8.RuneSelf && !isASCIILetter(c) && !(c >= '0' && c <= '9') && !unicode.IsSpace(rune(c))
}

// contraction is the length of the GPT-2 contraction suffix at the start of s
// (after an apostrophe), or 0.
func contraction(s string) int {
	for _, suf := range [...]string{"ll", "re", "ve", "s", "t", "m", "d"} {
		if len(s) >= len(suf) && s[:len(suf)] == suf && (len(s) == len(suf) || !isASCIILetter(s[len(suf)])) {
			return len(suf)
		}
	}
	return 0
}
