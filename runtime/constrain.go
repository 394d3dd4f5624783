package runtime

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/pitstop-llm/pitstop/models/grammar"
)

// ResponseFormat is OpenAI's response_format: Type "text" (the default),
// "json_object" (any JSON object) or "json_schema" (Schema; Strict).
type ResponseFormat struct {
	Type   string
	Name   string
	Schema json.RawMessage
	Strict bool
}

// grammars are the runtime's constrained-decoding state: the vocabulary's
// trie and the compiled grammars per schema (built on first use).
type grammars struct {
	once  sync.Once
	cache *grammar.Cache
	none  grammar.Mask // no token
	ws    grammar.Mask // tokens of whitespace only
}

func (rt *Runtime) grammarCache() *grammars {
	g := &rt.gram
	g.once.Do(func() {
		n := rt.tok.VocabSize()
		toks := make([][]byte, n)
		g.none = make(grammar.Mask, (n+63)/64)
		g.ws = make(grammar.Mask, (n+63)/64)
		for id := range int32(n) {
			if rt.tok.IsSpecial(id) || rt.markup[id] != "" || rt.stop[id] {
				continue
			}
			toks[id] = rt.tok.TokenBytes(id)
			if len(toks[id]) > 0 && strings.TrimSpace(string(toks[id])) == "" {
				g.ws[id>>6] |= 1 << (id & 63)
			}
		}
		g.cache = grammar.NewCache(grammar.NewVocab(toks, nil), 256)
	})
	return g
}

// phase is where a constrained turn is.
type phase uint8

const (
	phFree   phase = iota // text; the open marker may be banned
	phMarker              // the turn must open a tool call
	phCall                // in a tool call's JSON
	phAfter               // after a tool call: whitespace, another call, the end
	phJSON                // the answer is a JSON document
	phEnded
)

// constraint is a call's constrained decoding: which tokens the model may
// write next, by the call's response_format, tool_choice and the tool
// calls' grammar (Config.ConstrainToolCalls or strict tools).
type constraint struct {
	g        *grammars
	stops    []int32
	open     int32 // the open marker token (-1: none)
	close    int32 // the close marker token (-1: calls end at a stop token)
	choice   ChoiceMode
	parallel bool
	json     *grammar.Compiled // the answer's grammar (response_format), or nil
	call     *grammar.Compiled // the tool calls' grammar, or nil: calls are not constrained
	turns    int
	tools    bool // tools are offered and tool_choice is not "none"

	// left is how many tokens the call may still write, the next one
	// included (the smaller of max_tokens and the context's room; set before
	// each mask; 0: no limit, as for a scripted model's check). Documents
	// and tool calls are closed within it (grammar.Matcher.MaskWithin).
	left int
	// callLeast is the fewest tokens of a tool call's JSON (its grammar's
	// cost from the start); after is what a call needs once its JSON is
	// complete: the close marker and a token that ends the turn.
	callLeast, after int

	phase phase
	m     *grammar.Matcher
	ws    int  // whitespace tokens since the last call closed
	wrote bool // the turn wrote a token
}

// newConstraint builds a call's constraint; nil when nothing constrains it.
func (rt *Runtime) newConstraint(req *ChatRequest, turn *Turn) (*constraint, error) {
	choice := turn.ToolChoice.Mode
	rf := req.ResponseFormat
	if rf != nil {
		switch rf.Type {
		case "", "text", "json_object":
		case "json_schema":
			if len(rf.Schema) == 0 {
				return nil, errorf(ErrInvalid, "response_format.json_schema.schema", "missing_required_parameter", "response_format json_schema needs a schema")
			}
		default:
			return nil, errorf(ErrInvalid, "response_format.type", "invalid_value", "unknown response_format type %q (valid: text, json_object, json_schema)", rf.Type)
		}
	}
	answer := rf != nil && (rf.Type == "json_object" || rf.Type == "json_schema")
	strict := false
	for _, t := range turn.Tools {
		strict = strict || req.StrictTools[t.Name]
	}
	constrainCalls := len(turn.Tools) > 0 && choice != ChoiceNone &&
		(rt.cfg.ConstrainToolCalls || strict || choice == ChoiceRequired || choice == ChoiceFunction)
	banCalls := choice == ChoiceNone && len(turn.Tools) > 0
	if !answer && !constrainCalls && !banCalls {
		return nil, nil
	}
	k := &constraint{g: rt.grammarCache(), open: -1, close: -1, choice: choice, parallel: turn.ParallelToolCalls,
		tools: len(turn.Tools) > 0 && choice != ChoiceNone}
	for id := range rt.stop {
		k.stops = append(k.stops, id)
	}
	mk := rt.tmpl.ToolCallMarkup()
	if id, ok := rt.tok.TokenID(mk.Open); ok && rt.markup[id] != "" {
		k.open = id
	}
	if id, ok := rt.tok.TokenID(mk.Close); ok && mk.Close != "" && rt.markup[id] != "" {
		k.close = id
	}
	if answer {
		var schema []byte
		if rf.Type == "json_schema" {
			schema = rf.Schema
		}
		cg, err := k.g.cache.Get(schema)
		if err != nil {
			return nil, errorf(ErrInvalid, "response_format.json_schema.schema", "unsupported_schema", "response_format's schema cannot be used for constrained decoding: %v", err)
		}
		k.json = cg
	}
	if constrainCalls {
		if k.open < 0 {
			return nil, errorf(ErrInvalid, "tool_choice", "unsupported_value",
				"constrained tool calls need the template's tool-call marker as a token of the model's tokenizer; model %s has none", rt.model.Name())
		}
		var specs []grammar.ToolSpec
		for _, t := range turn.Tools {
			if choice == ChoiceFunction && t.Name != turn.ToolChoice.Name {
				continue
			}
			specs = append(specs, grammar.ToolSpec{Name: t.Name, Parameters: t.Parameters})
		}
		key := "arguments"
		if rt.tmpl.Name() == "llama3.1" {
			key = "parameters"
		}
		cg, err := k.g.cache.GetToolCall(specs, key)
		if err != nil {
			return nil, errorf(ErrInvalid, "tools", "unsupported_schema", "the tools' parameters cannot be used for constrained tool calls: %v", err)
		}
		k.call = cg
		k.callLeast, k.after = cg.NewMatcher().Cost(), 1
		if k.close >= 0 {
			k.after = 2
		}
	}
	return k, nil
}

// startTurn sets the phase of a new turn: tool_choice required or a named
// function forces a call in the call's first turn only (later turns follow
// the tool results; forcing them would loop).
func (k *constraint) startTurn() {
	k.wrote, k.m = false, nil
	switch {
	case k.call != nil && k.turns == 0 && (k.choice == ChoiceRequired || k.choice == ChoiceFunction):
		k.phase = phMarker
	case k.json != nil:
		k.phase, k.m = phJSON, k.json.NewMatcher()
	default:
		k.phase = phFree
	}
	k.turns++
}

// allowed is the set of tokens the model may write next: base (nil: every
// token), plus extra, minus banned.
func (k *constraint) allowed() (base grammar.Mask, extra []int32, banned int32) {
	banned = -1
	switch k.phase {
	case phFree:
		if k.choice == ChoiceNone || !k.callFits() {
			banned = k.open
		}
		return nil, nil, banned
	case phMarker:
		return k.g.none, []int32{k.open}, -1
	case phCall:
		base = k.mask(k.after)
		if k.m.CanEnd() {
			if k.close >= 0 {
				extra = []int32{k.close}
			} else {
				extra = k.stops
			}
		}
		return base, extra, -1
	case phAfter:
		// One whitespace token may separate calls; then another call (when
		// parallel calls are on) or the end.
		extra = append(extra, k.stops...)
		if k.parallel && k.callFits() {
			extra = append(extra, k.open)
		}
		if k.ws > 0 || k.left == 1 {
			return k.g.none, extra, -1 // the last token must end the turn
		}
		return k.g.ws, extra, -1
	case phJSON:
		base = k.mask(1)
		if k.m.CanEnd() {
			extra = append(extra, k.stops...)
		}
		if !k.wrote && k.tools && k.open >= 0 && (k.call == nil || k.callFits()) {
			extra = append(extra, k.open)
		}
		return base, extra, -1
	}
	return k.g.none, k.stops, -1
}

// mask is the matcher's mask within the budget: this token, the
// document's rest, then reserve tokens after it.
func (k *constraint) mask(reserve int) grammar.Mask {
	if k.left <= 0 {
		return k.m.Mask()
	}
	return k.m.MaskWithin(k.left - 1 - reserve)
}

// callFits reports whether a constrained tool call opened now (the marker,
// its shortest JSON, what comes after) fits the budget.
func (k *constraint) callFits() bool {
	return k.call == nil || k.left <= 0 || 1+k.callLeast+k.after <= k.left
}

// allows reports whether tok may come next, whatever the budget (a
// scripted model's forced tokens; they are not drawn under it).
func (k *constraint) allows(tok int32) bool {
	left := k.left
	k.left = 0
	base, extra, banned := k.allowed()
	k.left = left
	if tok == banned {
		return false
	}
	for _, e := range extra {
		if e == tok {
			return true
		}
	}
	return base == nil || base.Has(tok)
}

// apply masks logits: the refused tokens' logits become -Inf.
func (k *constraint) apply(logits []float32) {
	base, extra, banned := k.allowed()
	if base != nil {
		var keep [8]float32
		saved := keep[:0]
		for _, e := range extra {
			if int(e) < len(logits) {
				saved = append(saved, logits[e])
			}
		}
		base.Apply(logits)
		j := 0
		for _, e := range extra {
			if int(e) < len(logits) && j < len(saved) {
				logits[e] = saved[j]
				j++
			}
		}
	}
	if banned >= 0 && int(banned) < len(logits) {
		logits[banned] = float32(math.Inf(-1))
	}
}

// accept advances the constraint by the token written.
func (k *constraint) accept(tok int32) error {
	k.wrote = true
	switch k.phase {
	case phFree:
		if tok == k.open && k.call != nil {
			k.phase, k.m = phCall, k.call.NewMatcher()
		}
	case phMarker, phAfter:
		k.ws++
		if tok == k.open {
			k.phase, k.m = phCall, k.call.NewMatcher()
		} else if k.isStop(tok) {
			k.phase = phEnded
		}
	case phCall:
		if tok == k.close || (k.close < 0 && k.isStop(tok)) {
			k.phase, k.ws = phAfter, 0
			return nil
		}
		return k.m.Accept(tok)
	case phJSON:
		if tok == k.open {
			// A tool call instead of the answer: under its grammar, or
			// free when calls are not constrained.
			k.phase = phFree
			if k.call != nil {
				k.phase, k.m = phCall, k.call.NewMatcher()
			}
			return nil
		}
		if k.isStop(tok) {
			k.phase = phEnded
			return nil
		}
		return k.m.Accept(tok)
	}
	return nil
}

func (k *constraint) isStop(tok int32) bool {
	for _, s := range k.stops {
		if s == tok {
			return true
		}
	}
	return false
}

// describe names the constraint for errors.
func (k *constraint) describe() string {
	var parts []string
	if k.json != nil {
		parts = append(parts, "response_format")
	}
	if k.call != nil {
		parts = append(parts, "constrained tool calls")
	}
	if k.choice == ChoiceNone {
		parts = append(parts, `tool_choice "none"`)
	}
	return fmt.Sprint(strings.Join(parts, ", "))
}
