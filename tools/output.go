package tools

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultMaxOutputBytes caps a tool's output when neither the tool nor the
// executor says otherwise.
const DefaultMaxOutputBytes = 64 << 10

// capOutput makes s safe to hand to the model: invalid UTF-8 is replaced by
// U+FFFD, and output longer than max bytes is cut on a UTF-8 boundary with a
// visible note of how much was left out. It reports whether it cut.
func capOutput(s string, max int) (string, bool) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if max <= 0 || len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	omitted := len(s) - cut
	var b strings.Builder
	b.Grow(cut + 48)
	b.WriteString(s[:cut])
	b.WriteString("\n…[truncated: ")
	b.WriteString(strconv.Itoa(omitted))
	b.WriteString(" bytes omitted]")
	return b.String(), true
}
