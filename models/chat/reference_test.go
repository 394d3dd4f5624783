package chat

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat/hfref"
)

// hfContext is the context transformers' apply_chat_template gives a
// template, as JSON: the shape messagesValue and toolsValue build.
func hfContext(t *testing.T, msgs []Message, tools []Tool, gen bool, bos, eos string) map[string]any {
	var ms []map[string]any
	for _, m := range msgs {
		o := map[string]any{"role": m.Role, "content": m.Content}
		if len(m.ToolCalls) > 0 {
			var calls []map[string]any
			for _, tc := range m.ToolCalls {
				args, err := argsJSON(tc)
				if err != nil {
					t.Fatal(err)
				}
				call := map[string]any{"type": "function", "function": map[string]any{"name": tc.Name, "arguments": json.RawMessage(args)}}
				if tc.ID != "" {
					call["id"] = tc.ID
				}
				calls = append(calls, call)
			}
			o["tool_calls"] = calls
		}
		if m.ToolCallID != "" {
			o["tool_call_id"] = m.ToolCallID
		}
		if m.Name != "" {
			o["name"] = m.Name
		}
		ms = append(ms, o)
	}
	var ts any
	if len(tools) > 0 {
		var list []json.RawMessage
		for _, tool := range tools {
			v, err := toolValue(tool)
			if err != nil {
				t.Fatal(err)
			}
			list = append(list, json.RawMessage(pyDumps(v, 0)))
		}
		ts = list
	}
	return map[string]any{"messages": ms, "tools": ts, "add_generation_prompt": gen,
		"bos_token": bos, "eos_token": eos, "date_string": "26 Nov 2026"}
}

// TestJinjaMatchesHuggingFace renders every shipped family's template for
// every conversation (system prompts, tools, parallel tool calls, tool
// results) with pitstop and with @huggingface/jinja and compares the
// prompts byte for byte; a template that raises must raise in both, with
// the same message.
func TestJinjaMatchesHuggingFace(t *testing.T) {
	type job struct {
		family, conv string
		gen          bool
		text, err    string
	}
	var jobs []job
	var reqs []map[string]any
	convs := jinjaConversations()
	names := make([]string, 0, len(convs))
	for n := range convs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, f := range jinjaFamilies {
		j := loadJinja(t, f.file, f.bos, f.eos)
		for _, name := range names {
			c := convs[name]
			for _, gen := range []bool{false, true} {
				text, err := j.Render(c.msgs, c.tools, gen)
				text = pyReprToJSON(t, text, c.msgs, c.tools)
				jb := job{family: f.file, conv: name, gen: gen, text: text}
				if err != nil {
					jb.err = err.Error()
				}
				jobs = append(jobs, jb)
				reqs = append(reqs, map[string]any{"op": "render", "template": j.Source(), "context": hfContext(t, c.msgs, c.tools, gen, f.bos, f.eos)})
			}
		}
	}
	var got []hfref.Rendered
	hfref.Run(t, reqs, &got)
	matched := map[string]int{}
	for i, jb := range jobs {
		ref := got[i]
		what := fmt.Sprintf("%s %s (generation prompt %v)", jb.family, jb.conv, jb.gen)
		switch {
		case ref.Error != "" || jb.err != "":
			if ref.Error == "" || jb.err == "" || !strings.Contains(jb.err, ref.Error) {
				t.Errorf("%s: pitstop error %q, @huggingface/jinja error %q", what, jb.err, ref.Error)
				continue
			}
		case ref.Text != jb.text:
			t.Errorf("%s: differs from @huggingface/jinja at byte %d:\npitstop %q\nhf      %q", what, firstDiff(jb.text, ref.Text), jb.text, ref.Text)
			continue
		}
		matched[jb.family]++
	}
	t.Logf("renders matching @huggingface/jinja per family: %v", matched)
}

// pyReprToJSON replaces, in a prompt rendered by pitstop, the mappings of
// the conversation (tools, tool-call arguments) that a template wrote as
// text ("{{ args }}", "tools|string") with their JSON. Python's str() of a
// dict, which pitstop writes as transformers does, is {'city': 'Paris'};
// JavaScript's, which @huggingface/jinja writes, is {"city": "Paris"}: the
// one place the two references disagree by design.
func pyReprToJSON(t *testing.T, text string, msgs []Message, tools []Tool) string {
	var vals []pyValue
	if len(tools) > 0 {
		list := pyValue{kind: 'a'}
		for _, tool := range tools {
			v, err := toolValue(tool)
			if err != nil {
				t.Fatal(err)
			}
			list.vals = append(list.vals, v)
		}
		vals = append(vals, list)
	}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			v, err := argsValue(tc)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
	}
	for _, v := range vals {
		text = strings.ReplaceAll(text, pyRepr(v), pyDumps(v, 0))
	}
	return text
}

// pyRepr is Python's repr of a JSON value.
func pyRepr(v pyValue) string {
	switch v.kind {
	case 'o':
		var parts []string
		for i, k := range v.keys {
			parts = append(parts, pyRepr(pyStr(k))+": "+pyRepr(v.vals[i]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case 'a':
		var parts []string
		for _, x := range v.vals {
			parts = append(parts, pyRepr(x))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case 's':
		q := "'"
		if strings.Contains(v.str, "'") && !strings.Contains(v.str, `"`) {
			q = `"`
		}
		s := strings.ReplaceAll(v.str, `\`, `\\`)
		s = strings.ReplaceAll(s, "\n", `\n`)
		if q == "'" {
			s = strings.ReplaceAll(s, "'", `\'`)
		}
		return q + s + q
	case 'b':
		if v.truth {
			return "True"
		}
		return "False"
	case 'z':
		return "None"
	}
	return v.str
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
