package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The templates serialise tools and arguments with Python's json.dumps
// (transformers' tojson filter: ensure_ascii=False, key order kept,
// separators ", " and ": ", or "," and ": " with an indent). pyValue and
// pyDumps reproduce that byte for byte, floats included.

type pyValue struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	str   string
	keys  []string
	vals  []pyValue
	truth bool
}

func pyObject(pairs ...any) pyValue {
	v := pyValue{kind: 'o'}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.keys = append(v.keys, pairs[i].(string))
		v.vals = append(v.vals, pairs[i+1].(pyValue))
	}
	return v
}

func pyStr(s string) pyValue { return pyValue{kind: 's', str: s} }

// parsePy reads JSON keeping key order. Repeated keys keep the first
// position and the last value, as a Python dict does.
func parsePy(data []byte) (pyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parsePyValue(dec)
	if err != nil {
		return pyValue{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return pyValue{}, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

func parsePyValue(dec *json.Decoder) (pyValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return pyValue{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := pyValue{kind: 'o'}
			index := map[string]int{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return pyValue{}, err
				}
				k := kt.(string)
				val, err := parsePyValue(dec)
				if err != nil {
					return pyValue{}, err
				}
				if i, ok := index[k]; ok {
					v.vals[i] = val
					continue
				}
				index[k] = len(v.keys)
				v.keys = append(v.keys, k)
				v.vals = append(v.vals, val)
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := pyValue{kind: 'a'}
			for dec.More() {
				val, err := parsePyValue(dec)
				if err != nil {
					return pyValue{}, err
				}
				v.vals = append(v.vals, val)
			}
			_, err := dec.Token()
			return v, err
		}
	case string:
		return pyStr(t), nil
	case json.Number:
		return pyValue{kind: 'n', str: pyNumber(string(t))}, nil
	case bool:
		return pyValue{kind: 'b', truth: t}, nil
	case nil:
		return pyValue{kind: 'z'}, nil
	}
	return pyValue{}, fmt.Errorf("unexpected JSON token %v", tok)
}

// pyNumber writes a JSON number as Python re-serialises it: integers as
// they are (Python ints are exact), floats as repr(float).
func pyNumber(n string) string {
	if !strings.ContainsAny(n, ".eE") {
		if strings.TrimLeft(n, "-0") == "" {
			return "0"
		}
		return n
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil && !math.IsInf(f, 0) {
		return n
	}
	return pyFloat(f)
}

// pyFloat is Python's repr(float) (json.dumps uses float.__repr__).
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	decpt := exp + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	x := decpt - 1
	if x < 0 {
		es = "-"
		x = -x
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, x)
}

// pyQuote is json.dumps of a str with ensure_ascii=False.
func pyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pyDumps is json.dumps(v, ensure_ascii=False, indent=indent); indent 0
// means None (one line).
func pyDumps(v pyValue, indent int) string {
	var b strings.Builder
	writePy(&b, v, indent, 0)
	return b.String()
}

func writePy(b *strings.Builder, v pyValue, indent, level int) {
	sep := func(i int) {
		if indent == 0 {
			if i > 0 {
				b.WriteString(", ")
			}
			return
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", indent*(level+1)))
	}
	closing := func(c byte) {
		if indent > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*level))
		}
		b.WriteByte(c)
	}
	switch v.kind {
	case 'o':
		if len(v.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range v.keys {
			sep(i)
			b.WriteString(pyQuote(k))
			b.WriteString(": ")
			writePy(b, v.vals[i], indent, level+1)
		}
		closing('}')
	case 'a':
		if len(v.vals) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, x := range v.vals {
			sep(i)
			writePy(b, x, indent, level+1)
		}
		closing(']')
	case 's':
		b.WriteString(pyQuote(v.str))
	case 'n':
		b.WriteString(v.str)
	case 'b':
		if v.truth {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	default:
		b.WriteString("null")
	}
}

// toolValue is the OpenAI tool object the templates receive:
// {"type": "function", "function": {"name", "description", "parameters"}}.
func toolValue(t Tool) (pyValue, error) {
	fn := pyObject("name", pyStr(t.Name))
	if t.Description != "" {
		fn.keys = append(fn.keys, "description")
		fn.vals = append(fn.vals, pyStr(t.Description))
	}
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		p, err := parsePy(t.Parameters)
		if err != nil {
			return pyValue{}, fmt.Errorf("chat: tool %q: parameters are not valid JSON: %w", t.Name, err)
		}
		fn.keys = append(fn.keys, "parameters")
		fn.vals = append(fn.vals, p)
	}
	return pyObject("type", pyStr("function"), "function", fn), nil
}

// argsJSON re-serialises a call's arguments as tojson does ("" is {}).
func argsJSON(c ToolCall) (string, error) {
	s := strings.TrimSpace(c.Arguments)
	if s == "" {
		return "{}", nil
	}
	v, err := parsePy([]byte(s))
	if err != nil {
		return "", fmt.Errorf("chat: tool call %q: arguments are not valid JSON: %w", c.Name, err)
	}
	return pyDumps(v, 0), nil
}
