// Package tinytools makes pitstop's built-in tiny tool-calling model: a
// generated corpus of tool-use dialogues over the built-in tools, a
// byte-level BPE tokenizer trained on it, a small Llama-architecture model
// trained in Go with a hand-written backward pass, and the evaluation that
// runs the model through the whole tool loop (generate, parse the Hermes
// tool call, run the tool, feed the result back, generate the answer).
//
// It is a training kit, so it stands in training/, outside models/ (which
// holds what serving runs); only the CLI (train-tiny, eval-tiny) imports
// it. Its matrix products are models/kernel's, the ones serving runs.
package tinytools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/tools"
)

// Kinds of dialogue.
const (
	KindCalculator  = "calculator"
	KindCurrentTime = "current_time"
	KindUnitConvert = "unit_convert"
	KindMulti       = "multi" // two tool calls in one turn
	KindNone        = "none"  // no tool needed: a direct answer
)

// Variant is a prompt prefix: the chat template, the system prompt and the
// tools offered. Every dialogue of a variant starts with the same rendered
// text up to the user turn, which training computes once per batch.
type Variant struct {
	Template string   // "qwen2.5" or "hermes"
	System   string   // "": no system message (qwen2.5 then writes its default)
	Tools    []string // offered built-in tools, in the order the client lists them
	Weight   float64
	// Short marks the curriculum variant: a one-line system prompt naming
	// the tools instead of the tools block, so that the first training
	// steps, on short sequences, teach the skills cheaply. The server never
	// renders it; it has no weight in the mix.
	Short bool
}

// ShortVariant is the index of the curriculum variant.
var ShortVariant = len(Variants) - 1

// Variants are the prompt prefixes of the corpus: five system prompts
// (none, Qwen's default, three others) times the tool lists a client may
// declare (all three built-ins in registry order most often, other orders,
// single tools and pairs), plus two prompts without tools.
var Variants = buildVariants()

func buildVariants() []Variant {
	systems := []struct {
		tpl, sys string
		w        float64
	}{
		{"hermes", "", 3},
		{"qwen2.5", "", 3},
		{"qwen2.5", "You are a helpful assistant.", 2},
		{"qwen2.5", "You are a helpful assistant. Use the tools when they help.", 1},
		{"qwen2.5", "You are pitstop's built-in tiny model. Use the tools for arithmetic, the time and unit conversions.", 1},
	}
	c, t, u := tools.CalculatorTool, tools.CurrentTimeTool, tools.UnitConvertTool
	toolsets := []struct {
		names []string
		w     float64
	}{
		{[]string{c, t, u}, 4},
		{[]string{c, u, t}, 0.2}, {[]string{t, c, u}, 0.2}, {[]string{t, u, c}, 0.2}, {[]string{u, c, t}, 0.2}, {[]string{u, t, c}, 0.2},
		{[]string{c}, 0.3}, {[]string{t}, 0.3}, {[]string{u}, 0.3},
		{[]string{c, t}, 0.2}, {[]string{c, u}, 0.2}, {[]string{t, u}, 0.2},
	}
	var out []Variant
	for _, ts := range toolsets {
		for _, s := range systems {
			out = append(out, Variant{Template: s.tpl, System: s.sys, Tools: ts.names, Weight: s.w * ts.w})
		}
	}
	out = append(out, Variant{Template: "hermes", Weight: 0.6}, Variant{Template: "qwen2.5", System: "You are a helpful assistant.", Weight: 0.6})
	out = append(out, Variant{Template: "hermes", System: "Tools: calculator, current_time, unit_convert.", Tools: []string{c, t, u}, Short: true})
	return out
}

// has reports whether the variant offers tool name.
func (v Variant) has(name string) bool { return slices.Contains(v.Tools, name) }

// Example is one generated dialogue: a user question and either tool calls,
// their results and the final answer, or a direct answer.
type Example struct {
	Variant int
	Kind    string
	User    string
	Calls   []chat.ToolCall // expected calls (empty for KindNone)
	Results []string        // the tools' outputs, from tools.Executor
	Keys    []string        // what the final answer must quote of each result
	Answer  string          // final (or direct) assistant answer
	Now     time.Time       // current_time's clock for this dialogue
}

// Toolset holds the built-in tools, run through a tools.Executor whose
// current_time clock is set per dialogue. Safe for concurrent use (Run
// serializes on the clock).
type Toolset struct {
	mu    sync.Mutex
	now   time.Time
	exec  *tools.Executor
	reg   *tools.Registry
	specs []chat.Tool
}

// NewToolset registers the built-in tools (calculator, current_time,
// unit_convert) with a settable clock.
func NewToolset() (*Toolset, error) {
	ts := &Toolset{reg: tools.NewRegistry()}
	if err := tools.RegisterBuiltins(ts.reg, tools.BuiltinConfig{Now: func() time.Time { return ts.now }}); err != nil {
		return nil, err
	}
	exec, err := tools.NewExecutor(ts.reg, tools.ExecutorConfig{CacheMaxBytes: -1})
	if err != nil {
		return nil, err
	}
	ts.exec = exec
	for _, d := range ts.reg.OpenAIDefinitions() {
		ts.specs = append(ts.specs, chat.Tool{Name: d.Function.Name, Description: d.Function.Description, Parameters: d.Function.Parameters})
	}
	return ts, nil
}

// Specs returns the tools as the chat template renders them.
func (ts *Toolset) Specs() []chat.Tool { return ts.specs }

// Run runs calls at clock now and returns the results' contents.
func (ts *Toolset) Run(now time.Time, calls []chat.ToolCall) []tools.Result {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.now = now
	out := make([]tools.Result, len(calls))
	for i, c := range calls {
		out[i] = ts.exec.Run(context.Background(), tools.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return out
}

// Messages returns the conversation of e: system (if any), user, and, for a
// full dialogue, the assistant's calls, the tool results and the answer.
// With promptOnly it stops after the user turn.
func (e *Example) Messages(promptOnly bool) []chat.Message {
	v := Variants[e.Variant]
	var msgs []chat.Message
	if v.System != "" {
		msgs = append(msgs, chat.Message{Role: chat.RoleSystem, Content: v.System})
	}
	msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: e.User})
	if promptOnly {
		return msgs
	}
	if len(e.Calls) > 0 {
		msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, ToolCalls: e.Calls})
		for i, r := range e.Results {
			msgs = append(msgs, chat.Message{Role: chat.RoleTool, Content: r, ToolCallID: e.Calls[i].ID, Name: e.Calls[i].Name})
		}
	}
	msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, Content: e.Answer})
	return msgs
}

// Template returns the chat template of a variant.
func (v Variant) template() chat.Template {
	if v.Template == "hermes" {
		return chat.NewHermes()
	}
	return chat.NewQwen25()
}

// tools returns the tools a variant offers, as the server renders them
// (nil when none).
func (v Variant) tools(ts *Toolset) []chat.Tool {
	if v.Short {
		return nil
	}
	var out []chat.Tool
	for _, n := range v.Tools {
		for _, t := range ts.Specs() {
			if t.Name == n {
				out = append(out, t)
			}
		}
	}
	return out
}

// Span is a byte range [Start, End) of rendered text.
type Span struct{ Start, End int }

// Render writes the whole dialogue with the chat template and returns the
// text, the length of the prompt prefix shared by every dialogue of its
// variant (system turn and tools), and the assistant spans: what the model
// writes, each ending with the end-of-turn token.
func (e *Example) Render(ts *Toolset) (text string, prefixLen int, spans []Span, err error) {
	r, prefixLen, spans, err := e.render(ts)
	return r.Text, prefixLen, spans, err
}

// render is Render with the template's spans of conversation text.
func (e *Example) render(ts *Toolset) (r chat.Rendered, prefixLen int, spans []Span, err error) {
	v := Variants[e.Variant]
	tpl := v.template()
	msgs := e.Messages(false)
	r, err = tpl.RenderSpans(msgs, v.tools(ts), false)
	if err != nil {
		return chat.Rendered{}, 0, nil, err
	}
	text := r.Text
	prefixLen, err = PrefixLen(e.Variant, ts)
	if err != nil {
		return chat.Rendered{}, 0, nil, err
	}
	// Locate each assistant turn: after "<|im_start|>assistant\n" up to and
	// including its "<|im_end|>".
	const head = "<|im_start|>assistant"
	end := tpl.EndOfTurn()
	pos := prefixLen
	for {
		i := strings.Index(text[pos:], head)
		if i < 0 {
			break
		}
		start := pos + i + len(head)
		if strings.HasPrefix(text[start:], "\n") {
			start++
		}
		j := strings.Index(text[start:], end)
		if j < 0 {
			return chat.Rendered{}, 0, nil, fmt.Errorf("tinytools: assistant turn without %s", end)
		}
		spans = append(spans, Span{start, start + j + len(end)})
		pos = start + j + len(end)
	}
	return r, prefixLen, spans, nil
}

// Prompt renders the prompt the server would build for e: everything up to
// and including the assistant header of the first turn.
func (e *Example) Prompt(ts *Toolset) (string, error) {
	r, err := e.PromptSpans(ts)
	return r.Text, err
}

// PromptSpans is Prompt with the template's spans of conversation text, as
// the server tokenizes it (chat.Rendered.Encode).
func (e *Example) PromptSpans(ts *Toolset) (chat.Rendered, error) {
	v := Variants[e.Variant]
	return v.template().RenderSpans(e.Messages(true), v.tools(ts), true)
}

var prefixCache sync.Map // variant -> int

// PrefixLen is the length of the text every dialogue of variant v starts
// with: the system turn (with the tools block) and "<|im_start|>user\n".
func PrefixLen(v int, ts *Toolset) (int, error) {
	if n, ok := prefixCache.Load(v); ok {
		return n.(int), nil
	}
	va := Variants[v]
	tpl := va.template()
	var msgs []chat.Message
	if va.System != "" {
		msgs = append(msgs, chat.Message{Role: chat.RoleSystem, Content: va.System})
	}
	a, err := tpl.Render(append(msgs, chat.Message{Role: chat.RoleUser, Content: "a"}), va.tools(ts), false)
	if err != nil {
		return 0, err
	}
	b, err := tpl.Render(append(msgs, chat.Message{Role: chat.RoleUser, Content: "b"}), va.tools(ts), false)
	if err != nil {
		return 0, err
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	prefixCache.Store(v, n)
	return n, nil
}

// Generator makes dialogues deterministically from a seed.
type Generator struct {
	ts *Toolset
}

// NewGenerator returns a generator running the tools of ts.
func NewGenerator(ts *Toolset) *Generator { return &Generator{ts: ts} }

// Streams of examples: the training stream and the held-out stream draw from
// different random streams of the same seed.
const (
	StreamTrain uint64 = 0x7472_6169_6e00_0000 // "train"
	StreamEval  uint64 = 0x6576_616c_0000_0000 // "eval"
)

// Example returns example i of a stream for seed: the same arguments give
// the same dialogue. variant < 0 draws the variant by weight.
func (g *Generator) Example(seed int64, stream uint64, i int, variant int) (Example, error) {
	r := rand.New(rand.NewPCG(uint64(seed)^stream, uint64(i)*0x9e3779b97f4a7c15+1))
	if variant < 0 {
		variant = pickVariant(r)
	}
	return g.generate(r, variant)
}

func pickVariant(r *rand.Rand) int {
	total := 0.0
	for _, v := range Variants {
		total += v.Weight
	}
	x := r.Float64() * total
	for i, v := range Variants {
		x -= v.Weight
		if x < 0 {
			return i
		}
	}
	return len(Variants) - 1
}

// PickVariant draws a variant by weight from a seed and a step.
func PickVariant(seed int64, step int) int {
	return pickVariant(rand.New(rand.NewPCG(uint64(seed)^0x7661726961, uint64(step))))
}

func (g *Generator) generate(r *rand.Rand, variant int) (Example, error) {
	e := Example{Variant: variant}
	// A clock between 2020 and 2030, whole seconds.
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	e.Now = time.Unix(base+r.Int64N(10*365*86400), 0).UTC()
	v := Variants[variant]
	if len(v.Tools) == 0 {
		e.Kind = KindNone
		e.User, e.Answer = noToolQA(r)
		return e, nil
	}
	// Kinds by weight, among the offered tools.
	kinds := []struct {
		kind string
		w    float64
		gen  func(*rand.Rand) toolQ
	}{
		{KindCalculator, 0.33, calcQuestion}, {KindCurrentTime, 0.20, timeQuestion}, {KindUnitConvert, 0.20, unitQuestion},
	}
	var offered []func(*rand.Rand) toolQ
	total := 0.27 // multi (0.11) and none (0.16)
	for _, k := range kinds {
		if v.has(k.kind) {
			total += k.w
			offered = append(offered, k.gen)
		}
	}
	x := r.Float64() * total
	var parts []toolQ
	for _, k := range kinds {
		if !v.has(k.kind) {
			continue
		}
		if x < k.w {
			e.Kind = k.kind
			parts = []toolQ{k.gen(r)}
			break
		}
		x -= k.w
	}
	if parts == nil {
		if x < 0.11 {
			e.Kind = KindMulti
			i, j := r.IntN(len(offered)), r.IntN(len(offered))
			for j == i && len(offered) > 1 && r.IntN(3) != 0 { // mostly two different tools
				j = r.IntN(len(offered))
			}
			parts = []toolQ{offered[i](r), offered[j](r)}
		} else {
			e.Kind = KindNone
			e.User, e.Answer = noToolQA(r)
			return e, nil
		}
	}
	for i, p := range parts {
		e.Calls = append(e.Calls, chat.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: p.tool, Arguments: p.args})
	}
	results := g.ts.Run(e.Now, e.Calls)
	var answers []string
	for i, res := range results {
		if res.IsError {
			return e, fmt.Errorf("tinytools: generated call %s %s failed: %s", e.Calls[i].Name, e.Calls[i].Arguments, res.Content)
		}
		e.Results = append(e.Results, res.Content)
		key := resultKey(e.Calls[i].Name, res.Content)
		e.Keys = append(e.Keys, key)
		answers = append(answers, parts[i].answer(r, res.Content, key))
	}
	if len(parts) == 1 {
		e.User = parts[0].question
	} else {
		e.User = joinQuestions(r, parts[0].question, parts[1].question)
	}
	e.Answer = strings.Join(answers, " ")
	return e, nil
}

// resultKey is the part of a tool's result a good answer quotes: the whole
// calculator result; the converted quantity of unit_convert; the time (or
// date) of current_time without the weekday and zone note.
func resultKey(tool, result string) string {
	switch tool {
	case tools.UnitConvertTool:
		if _, after, ok := strings.Cut(result, " = "); ok {
			return after
		}
	case tools.CurrentTimeTool:
		if before, _, ok := strings.Cut(result, " ("); ok {
			return before
		}
	}
	return result
}

// ResultKey is resultKey for the evaluation.
func ResultKey(tool, result string) string { return resultKey(tool, result) }

// toolQ is one generated tool question.
type toolQ struct {
	question string
	tool     string
	args     string
	answer   func(r *rand.Rand, result, key string) string
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func argsJSON(kv ...any) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
	}
	b.WriteString("}")
	return b.String()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func joinQuestions(r *rand.Rand, a, b string) string {
	switch r.IntN(4) {
	case 0:
		return a + " Also, " + lowerFirst(b)
	case 1:
		return a + " And " + lowerFirst(b)
	case 2:
		return "Two things: " + lowerFirst(a) + " " + b
	default:
		return a + " " + b
	}
}
