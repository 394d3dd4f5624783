package chat

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// The values a Jinja chat template receives are built the way Hugging Face's
// apply_chat_template passes them: messages in OpenAI's shape with tool-call
// arguments as objects, tools as {"type": "function", "function": {...}},
// key order kept. A tracer, when given, replaces the conversation's text
// with placeholders (jinja_trace.go).

// messagesValue is the template's messages variable.
func messagesValue(msgs []Message, tr *tracer) (jinja.Value, error) {
	items := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		md := d.AsDict()
		md.Set("role", jinja.NewString(m.Role))
		md.Set("content", jinja.NewString(tr.content(m.Content, i, m.Role)))
		if len(m.ToolCalls) > 0 {
			calls := make([]jinja.Value, len(m.ToolCalls))
			for k, tc := range m.ToolCalls {
				args, err := argsValue(tc)
				if err != nil {
					return jinja.Value{}, err
				}
				fn := jinja.NewDict()
				fn.AsDict().Set("name", jinja.NewString(tr.text(tc.Name, SpanToolCall, i, m.Role)))
				fn.AsDict().Set("arguments", tr.value(args, SpanToolCall, i, m.Role, true))
				c := jinja.NewDict()
				if tc.ID != "" {
					c.AsDict().Set("id", jinja.NewString(tc.ID))
				}
				c.AsDict().Set("type", jinja.NewString("function"))
				c.AsDict().Set("function", fn)
				calls[k] = c
			}
			md.Set("tool_calls", jinja.NewList(calls))
		}
		if m.ToolCallID != "" {
			md.Set("tool_call_id", jinja.NewString(m.ToolCallID))
		}
		if m.Name != "" {
			md.Set("name", jinja.NewString(tr.text(m.Name, SpanToolCall, i, m.Role)))
		}
		items[i] = d
	}
	return jinja.NewList(items), nil
}

// argsValue parses a call's arguments ("" is {}).
func argsValue(tc ToolCall) (pyValue, error) {
	s, err := argsJSON(tc)
	if err != nil {
		return pyValue{}, err
	}
	return parsePy([]byte(s))
}

// toolsValue is the template's tools variable: None without tools, as
// transformers passes it.
func toolsValue(tools []Tool, tr *tracer) (jinja.Value, error) {
	if len(tools) == 0 {
		return jinja.None(), nil
	}
	items := make([]jinja.Value, len(tools))
	for i, t := range tools {
		v, err := toolValue(t)
		if err != nil {
			return jinja.Value{}, err
		}
		items[i] = tr.toolDef(v, i)
	}
	return jinja.NewList(items), nil
}

// plainValue converts a parsed JSON value to a template value.
func plainValue(v pyValue) jinja.Value {
	switch v.kind {
	case 'o':
		d := jinja.NewDict()
		for i, k := range v.keys {
			d.AsDict().Set(k, plainValue(v.vals[i]))
		}
		return d
	case 'a':
		items := make([]jinja.Value, len(v.vals))
		for i, x := range v.vals {
			items[i] = plainValue(x)
		}
		return jinja.NewList(items)
	case 's':
		return jinja.NewString(v.str)
	case 'n':
		if n, err := strconv.ParseInt(v.str, 10, 64); err == nil {
			return jinja.NewInt(n)
		}
		f, _ := strconv.ParseFloat(v.str, 64)
		return jinja.NewFloat(f)
	case 'b':
		return jinja.NewBool(v.truth)
	}
	return jinja.None()
}

// toPy converts a template value back for tojson; undefined and callables
// are null, as Python's json.dumps cannot write them either.
func toPy(v jinja.Value) pyValue {
	switch {
	case v.IsDict():
		d := v.AsDict()
		out := pyValue{kind: 'o'}
		for _, k := range d.Keys {
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, toPy(d.Data[k]))
		}
		return out
	case v.IsList():
		out := pyValue{kind: 'a'}
		for _, x := range v.AsList().Items {
			out.vals = append(out.vals, toPy(x))
		}
		return out
	case v.IsString():
		return pyStr(v.AsString())
	case v.IsBool():
		return pyValue{kind: 'b', truth: v.AsBool()}
	case v.IsInt():
		return pyValue{kind: 'n', str: strconv.FormatInt(v.AsInt(), 10)}
	case v.IsFloat():
		f := v.AsFloat()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return pyValue{kind: 'z'}
		}
		return pyValue{kind: 'n', str: pyFloat(f)}
	}
	return pyValue{kind: 'z'}
}

// tojsonFunc is transformers' tojson: json.dumps(x, ensure_ascii=False,
// indent=indent), key order kept. The engine's own filter writes Go's JSON
// (keys sorted when indented, 7.0 as 7) and filters cannot be added to it,
// so the template's "NAME | tojson" are rewritten as calls of this
// function (rewriteTojson).
func tojsonFunc(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.NewString("null"), nil
	}
	indent := 0
	if v, ok := kwargs["indent"]; ok && v.IsInt() {
		indent = int(v.AsInt())
	} else if len(args) > 1 && args[1].IsInt() {
		indent = int(args[1].AsInt())
	}
	return jinja.NewString(pyDumps(toPy(args[0]), indent)), nil
}

// tojsonUse is "operand | tojson" or "operand | tojson(indent=N)" where the
// operand is a variable, attribute or subscript chain.
var tojsonUse = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\[\]]*\])*)\s*\|\s*tojson(?:\(\s*indent\s*=\s*([0-9]+)\s*\))?`)

// rewriteTojson turns src's "x | tojson(indent=4)" into
// "__pitstop_tojson(x, 4)". An operand that is itself filtered ("x | trim |
// tojson") or a literal is left to the engine's filter.
func rewriteTojson(src string) string {
	var b strings.Builder
	prev := 0
	for _, m := range tojsonUse.FindAllStringSubmatchIndex(src, -1) {
		before := strings.TrimRight(src[:m[0]], " \t\n")
		if strings.HasSuffix(before, "|") || strings.HasSuffix(before, ".") {
			continue
		}
		b.WriteString(src[prev:m[0]])
		b.WriteString("__pitstop_tojson(" + src[m[2]:m[3]])
		if m[4] >= 0 {
			b.WriteString(", " + src[m[4]:m[5]])
		}
		b.WriteString(")")
		prev = m[1]
	}
	b.WriteString(src[prev:])
	return b.String()
}
