package chat

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// Spans of a Jinja-rendered prompt are found by rendering twice: once with
// the conversation, once with each piece of its text (message contents,
// tool-call names and arguments, the strings of tool definitions) replaced
// by a placeholder the template cannot mistake for anything else. The
// second rendering shows the template's markup between the placeholders;
// aligning it with the first tells where each piece went, as written (a
// template may trim it or write it inside a JSON string). A prompt that
// does not align is an error: guessing could let conversation text become
// special tokens.

const (
	phOpen  = "\uE000"
	phClose = "\uE001"
)

var phPattern = regexp.MustCompile(phOpen + `([0-9]+)` + phClose)

// traced is one piece of conversation text behind a placeholder.
type traced struct {
	raw  string
	kind SpanKind
	msg  int
	role string
}

// tracer hands out placeholders; a nil tracer hands out the text itself.
// Equal text of one kind and role shares a placeholder, so that a template
// comparing messages or names compares as it would the text.
type tracer struct {
	pieces []traced
	index  map[string]int
}

func (t *tracer) place(s string, kind SpanKind, msg int, role string) string {
	if t == nil || s == "" {
		return s
	}
	key := strconv.Itoa(int(kind)) + "\x00" + role + "\x00" + s
	if kind != SpanContent {
		key = "\x00" + s // tool names are compared across definitions and calls
	}
	i, ok := t.index[key]
	if !ok {
		if t.index == nil {
			t.index = map[string]int{}
		}
		i = len(t.pieces)
		t.index[key] = i
		t.pieces = append(t.pieces, traced{raw: s, kind: kind, msg: msg, role: role})
	}
	return phOpen + strconv.Itoa(i) + phClose
}

func (t *tracer) content(s string, msg int, role string) string {
	return t.place(s, SpanContent, msg, role)
}

func (t *tracer) text(s string, kind SpanKind, msg int, role string) string {
	return t.place(s, kind, msg, role)
}

// value converts v, its strings (and, with keys, its object keys) behind
// placeholders.
func (t *tracer) value(v pyValue, kind SpanKind, msg int, role string, keys bool) jinja.Value {
	if t == nil {
		return plainValue(v)
	}
	switch v.kind {
	case 'o':
		d := jinja.NewDict()
		for i, k := range v.keys {
			if keys {
				k = t.place(k, kind, msg, role)
			}
			d.AsDict().Set(k, t.value(v.vals[i], kind, msg, role, keys))
		}
		return d
	case 'a':
		items := make([]jinja.Value, len(v.vals))
		for i, x := range v.vals {
			items[i] = t.value(x, kind, msg, role, keys)
		}
		return jinja.NewList(items)
	case 's':
		return jinja.NewString(t.place(v.str, kind, msg, role))
	}
	return plainValue(v)
}

// toolDef converts a tool definition. Schema keywords stay as they are
// (templates look types up); names, descriptions, the names of properties
// and other strings go behind placeholders.
func (t *tracer) toolDef(v pyValue, tool int) jinja.Value {
	if t == nil {
		return plainValue(v)
	}
	return t.schema(v, tool, false)
}

func (t *tracer) schema(v pyValue, tool int, propNames bool) jinja.Value {
	switch v.kind {
	case 'o':
		d := jinja.NewDict()
		for i, k := range v.keys {
			val := v.vals[i]
			name := k
			if propNames {
				name = t.place(k, SpanToolDef, tool, "")
			}
			switch {
			case propNames:
				d.AsDict().Set(name, t.schema(val, tool, false))
			case k == "properties" && val.kind == 'o':
				d.AsDict().Set(name, t.schema(val, tool, true))
			case (k == "type" || k == "format" || k == "$ref") && val.kind == 's':
				d.AsDict().Set(name, plainValue(val))
			default:
				d.AsDict().Set(name, t.schema(val, tool, false))
			}
		}
		return d
	case 'a':
		items := make([]jinja.Value, len(v.vals))
		for i, x := range v.vals {
			if x.kind == 's' && x.str != "" {
				items[i] = jinja.NewString(t.place(x.str, SpanToolDef, tool, ""))
			} else {
				items[i] = t.schema(x, tool, false)
			}
		}
		return jinja.NewList(items)
	case 's':
		return jinja.NewString(t.place(v.str, SpanToolDef, tool, ""))
	}
	return plainValue(v)
}

// forms are the ways a template may write a piece of text: as it is,
// trimmed, or inside a JSON string literal (tojson); and, for a reply with
// reasoning, what follows its last "</think>" (Qwen3's and DeepSeek-R1's
// templates drop the reasoning of earlier turns).
func forms(raw string) []string {
	out := []string{raw}
	add := func(s string) {
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	st := pyStrip(raw)
	add(st)
	q := pyQuote(raw)
	add(q[1 : len(q)-1])
	q = pyQuote(st)
	add(q[1 : len(q)-1])
	if i := strings.LastIndex(raw, "</think>"); i >= 0 {
		add(strings.TrimLeft(raw[i+len("</think>"):], "\n"))
	}
	return out
}

// alignBudget bounds the search of align: forms that match in several
// ways at several places could otherwise take exponential time.
const alignBudget = 1 << 16

// align finds the spans of text, the prompt rendered with the
// conversation, from shape, the prompt rendered with placeholders.
func (t *tracer) align(text, shape string) ([]Span, error) {
	locs := phPattern.FindAllStringSubmatchIndex(shape, -1)
	var markup []string
	var ids []int
	prev := 0
	for _, l := range locs {
		markup = append(markup, shape[prev:l[0]])
		id, err := strconv.Atoi(shape[l[2]:l[3]])
		if err != nil || id >= len(t.pieces) {
			return nil, fmt.Errorf("the template wrote an unknown placeholder")
		}
		ids = append(ids, id)
		prev = l[1]
	}
	markup = append(markup, shape[prev:])
	var spans []Span
	steps := 0
	var walk func(pos, k int) bool
	walk = func(pos, k int) bool {
		if steps++; steps > alignBudget {
			return false
		}
		if len(text)-pos < len(markup[k]) || text[pos:pos+len(markup[k])] != markup[k] {
			return false
		}
		pos += len(markup[k])
		if k == len(ids) {
			return pos == len(text)
		}
		p := t.pieces[ids[k]]
		for _, f := range forms(p.raw) {
			if len(text)-pos < len(f) || text[pos:pos+len(f)] != f {
				continue
			}
			n := len(spans)
			if f != "" {
				spans = append(spans, Span{Start: pos, End: pos + len(f), Kind: p.kind, Msg: p.msg, Role: p.role})
			}
			if walk(pos+len(f), k+1) {
				return true
			}
			spans = spans[:n]
		}
		return false
	}
	if !walk(0, 0) {
		return nil, fmt.Errorf("the conversation's text cannot be traced through the template (it rewrites message text beyond trimming and JSON quoting)")
	}
	return spans, nil
}
