package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// objScanner reads one JSON object byte by byte, the body of a tool call:
// {"name": "...", "arguments": {...}}. It learns the name as soon as its
// string closes and hands out the raw bytes of an object- or array-valued
// arguments key as they arrive (pending). Only the top level is looked at;
// the whole object is validated by encoding/json at the end.
type objScanner struct {
	argKeys []string
	st      scanState
	raw     []byte
	failMsg string

	key       string
	tokStart  int
	inStr     bool
	esc       bool
	depth     int
	expectKey bool
	curName   bool
	curArgs   bool

	nameSeen bool
	nameOK   bool
	name     string
	argsSeen bool
	args     []byte
	pending  []byte
}

type scanState int

const (
	sStart scanState = iota
	sKeyOrEnd
	sKey
	sColon
	sValue
	sComposite
	sString
	sPrim
	sAfterValue
	sDone
	sFailed
)

func newObjScanner(argKeys ...string) *objScanner { return &objScanner{argKeys: argKeys} }

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *objScanner) fail(format string, args ...any) {
	s.st = sFailed
	s.failMsg = fmt.Sprintf(format, args...)
}

func (s *objScanner) done() bool   { return s.st == sDone }
func (s *objScanner) failed() bool { return s.st == sFailed }

// feed scans one byte. After sDone or sFailed, bytes are only recorded.
func (s *objScanner) feed(c byte) {
	s.raw = append(s.raw, c)
	switch s.st {
	case sStart:
		if isWS(c) {
			return
		}
		if c != '{' {
			s.fail("expected a JSON object, found %q", c)
			return
		}
		s.st = sKeyOrEnd
	case sKeyOrEnd:
		switch {
		case isWS(c):
		case c == '"':
			s.st, s.tokStart, s.esc = sKey, len(s.raw)-1, false
		case c == '}' && !s.expectKey:
			s.st = sDone
		default:
			s.fail("expected an object key, found %q", c)
		}
	case sKey:
		if s.stringByte(c) {
			if err := json.Unmarshal(s.raw[s.tokStart:], &s.key); err != nil {
				s.fail("bad object key: %v", err)
				return
			}
			s.st = sColon
		}
	case sColon:
		switch {
		case isWS(c):
		case c == ':':
			s.st = sValue
		default:
			s.fail("expected ':' after key %q, found %q", s.key, c)
		}
	case sValue:
		if isWS(c) {
			return
		}
		s.tokStart = len(s.raw) - 1
		s.curName = s.key == "name" && !s.nameSeen
		s.curArgs = !s.argsSeen && s.isArgKey(s.key)
		switch {
		case c == '{' || c == '[':
			s.st, s.depth, s.inStr, s.esc = sComposite, 1, false, false
			if s.curArgs {
				s.pending = append(s.pending, c)
			}
		case c == '"':
			s.st, s.esc = sString, false
		case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
			s.st = sPrim
		default:
			s.fail("expected a JSON value for key %q, found %q", s.key, c)
		}
	case sComposite:
		if s.curArgs {
			s.pending = append(s.pending, c)
		}
		if s.inStr {
			if s.stringByte(c) {
				s.inStr = false
			}
			return
		}
		switch c {
		case '"':
			s.inStr, s.esc = true, false
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth == 0 {
				s.valueEnd(s.raw[s.tokStart:])
			}
		}
	case sString:
		if s.stringByte(c) {
			s.valueEnd(s.raw[s.tokStart:])
		}
	case sPrim:
		if c == ',' || c == '}' || isWS(c) {
			s.raw = s.raw[:len(s.raw)-1]
			s.valueEnd(s.raw[s.tokStart:])
			s.feed(c)
		}
	case sAfterValue:
		switch {
		case isWS(c):
		case c == ',':
			s.st, s.expectKey = sKeyOrEnd, true
		case c == '}':
			s.st = sDone
		default:
			s.fail("expected ',' or '}' after the value of %q, found %q", s.key, c)
		}
	}
}

// stringByte advances through a string body; true at its closing quote.
func (s *objScanner) stringByte(c byte) bool {
	switch {
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		return true
	}
	return false
}

func (s *objScanner) isArgKey(k string) bool {
	for _, a := range s.argKeys {
		if k == a {
			return true
		}
	}
	return false
}

func (s *objScanner) valueEnd(v []byte) {
	s.st, s.expectKey = sAfterValue, false
	if s.curName {
		s.nameSeen = true
		var name string
		if json.Unmarshal(v, &name) == nil && name != "" {
			s.name, s.nameOK = name, true
		}
	}
	if s.curArgs {
		s.argsSeen = true
		s.args = append([]byte(nil), v...)
	}
	s.curName, s.curArgs = false, false
}

// result validates the scanned object (with trailing, the text after it
// inside the call) and returns the arguments as a JSON object text, or an
// error message.
func (s *objScanner) result(trailing string) (string, string) {
	if s.failed() {
		return "", "malformed tool call JSON: " + s.failMsg
	}
	if !s.done() {
		if s.st == sStart {
			return "", "empty tool call"
		}
		return "", "malformed tool call JSON: unterminated object"
	}
	if strings.TrimSpace(trailing) != "" {
		return "", fmt.Sprintf("malformed tool call: unexpected text %q after the JSON object", trailing)
	}
	obj := bytes.TrimSpace(s.raw)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(obj, &fields); err != nil {
		return "", "malformed tool call JSON: " + err.Error()
	}
	switch {
	case !s.nameSeen:
		return "", `malformed tool call: no "name" key`
	case !s.nameOK:
		return "", `malformed tool call: "name" must be a non-empty string`
	}
	if !s.argsSeen {
		return "{}", ""
	}
	a := bytes.TrimSpace(s.args)
	switch a[0] {
	case '{':
		return string(a), ""
	case 'n':
		return "{}", ""
	case '"':
		var inner string
		_ = json.Unmarshal(a, &inner) // valid: the whole object parsed
		t := strings.TrimSpace(inner)
		if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
			return t, ""
		}
	}
	return "", fmt.Sprintf("malformed tool call: arguments must be a JSON object, got %s", truncate(string(a), 80))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
