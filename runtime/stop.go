package runtime

import (
	"encoding/json"
	"strings"
)

// stopMatcher ends a call's content at the first of the request's stop
// strings (OpenAI's stop). Content is held back while its tail could be
// the start of a stop string, so a stop string split across tokens, or
// across stream chunks, is never streamed in part: the text before it is
// emitted, the stop string and whatever follows are dropped.
type stopMatcher struct {
	stops []string
	held  string
}

// feed takes the next piece of content and returns what may be emitted
// now, and whether a stop string was found (then nothing more is emitted).
func (m *stopMatcher) feed(t string) (string, bool) {
	if len(m.stops) == 0 {
		return t, false
	}
	buf := m.held + t
	first := -1
	for _, s := range m.stops {
		if i := strings.Index(buf, s); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first >= 0 {
		m.held = ""
		return buf[:first], true
	}
	hold := 0
	for _, s := range m.stops {
		for k := min(len(s)-1, len(buf)); k > hold; k-- {
			if strings.HasSuffix(buf, s[:k]) {
				hold = k
				break
			}
		}
	}
	m.held = buf[len(buf)-hold:]
	return buf[:len(buf)-hold], false
}

// flush returns the text held back: the content ended (or a tool call
// started) without completing a stop string.
func (m *stopMatcher) flush() string {
	t := m.held
	m.held = ""
	return t
}

// undeclaredText is what a model's call of a tool the request did not
// offer becomes: content, the call as the JSON object the model meant
// ({"name": ..., "arguments": ...}), never a tool call.
func undeclaredText(name string, args string) string {
	b, _ := json.Marshal(name)
	if args == "" {
		args = "{}"
	}
	return `{"name": ` + string(b) + `, "arguments": ` + args + `}`
}
