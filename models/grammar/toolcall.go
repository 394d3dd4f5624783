package grammar

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ToolSpec is a function a tool call may name, with its parameters' JSON
// Schema (nil: any object).
type ToolSpec struct {
	Name       string
	Parameters json.RawMessage
}

// CompileToolCall compiles the grammar of one tool call's JSON as chat
// templates write it: {"name": "NAME", "ARGS": ARGUMENTS} with the name
// one of tools' and the arguments valid against that tool's parameters
// (argsKey is "arguments" for Hermes and Qwen, "parameters" for Llama 3.1).
// The prefix up to the arguments is written as the templates render it
// (", " and ": " separators).
func CompileToolCall(tools []ToolSpec, argsKey string) (*Grammar, error) {
	if len(tools) == 0 {
		return nil, fmt.Errorf("a tool-call grammar needs at least one tool")
	}
	if len(tools) > MaxEnum {
		return nil, fmt.Errorf("%d tools, at most %d are supported", len(tools), MaxEnum)
	}
	c := newCompiler()
	call := node{kind: kCall}
	call.first['{'] = true
	key, _ := json.Marshal(argsKey)
	for _, t := range tools {
		params := t.Parameters
		if len(strings.TrimSpace(string(params))) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object"}`)
		}
		var doc any
		if err := json.Unmarshal(params, &doc); err != nil {
			return nil, fmt.Errorf("tool %q: the parameters are not JSON: %w", t.Name, err)
		}
		c.doc, _ = doc.(map[string]any)
		c.refs = map[string]int32{}
		g, err := c.compileJSON(params, "tools/"+t.Name+"/parameters")
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		name, _ := json.Marshal(t.Name)
		call.lits = append(call.lits, `{"name": `+string(name)+`, `+string(key)+`: `)
		call.alts = append(call.alts, g)
	}
	i := c.add(call)
	c.g.nodes[c.g.root].child = i
	return c.g, nil
}

// compileJSON compiles a schema given as JSON (numbers kept exact).
func (c *compiler) compileJSON(raw []byte, path string) (int32, error) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return 0, err
	}
	m, _ := doc.(map[string]any)
	c.doc = m
	return c.compile(doc, path)
}

// stepCall advances a tool call: its prefix picks the tool (literal
// matching, st 1), the arguments follow (st 2), then the closing brace.
func (g *Grammar) stepCall(stk []frame, b byte) ([]frame, bool) {
	top := len(stk) - 1
	f := &stk[top]
	n := &g.nodes[f.node]
	switch f.st {
	case 0, 1:
		if f.st == 0 {
			f.st, f.cand = 1, 1<<len(n.lits)-1
		}
		var cand uint64
		for j, l := range n.lits {
			if f.cand&(1<<j) != 0 && int(f.pos) < len(l) && l[f.pos] == b {
				cand |= 1 << j
			}
		}
		if cand == 0 {
			return stk, false
		}
		f.cand = cand
		f.pos++
		for j, l := range n.lits {
			if cand&(1<<j) != 0 && int(f.pos) == len(l) {
				f.st, f.cur, f.cand, f.pos = 2, int16(j), 0, 0
				return append(stk, frame{node: n.alts[j]}), true
			}
		}
		return stk, true
	case 2:
		if isWS(b) {
			return stk, whitespace(f)
		}
		if b == '}' {
			return stk[:top], true
		}
	}
	return stk, false
}
