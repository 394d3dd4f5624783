package chat

import (
	"fmt"
	"maps"
	"strings"

	"github.com/ardanlabs/jinja"
)

// JinjaOptions configure a template rendered from a model's Jinja source.
type JinjaOptions struct {
	// Name is the template's name (default "jinja").
	Name string
	// BOS and EOS are the bos_token and eos_token the template writes.
	BOS, EOS string
	// ToolParser names the tool-call format (LookupToolFormat); "" detects
	// it from the template (DetectToolFormat), Hermes-style when nothing
	// shows.
	ToolParser string
	// Vars are more template variables (date_string, enable_thinking, ...).
	Vars map[string]any
}

// Jinja is a model's own chat template (tokenizer_config.json's
// chat_template, chat_template.jinja or a GGUF file's
// tokenizer.chat_template) rendered with github.com/ardanlabs/jinja, a
// Jinja engine written for chat templates, with transformers' tojson. It
// renders the nine shipped families' templates as @huggingface/jinja does
// (reference_test.go); gonja v2, the other Go engine tried, parses three of
// the nine.
// Spans are traced through the template (jinja_trace.go). A template that
// raises an exception fails the render with the template's message.
type Jinja struct {
	name   string
	src    string
	tmpl   *jinja.Template
	opts   JinjaOptions
	format ToolFormat
	eot    string
}

// NewJinja compiles src.
func NewJinja(src string, opts JinjaOptions) (*Jinja, error) {
	if opts.Name == "" {
		opts.Name = "jinja"
	}
	tmpl, err := jinja.Compile(rewriteTojson(src))
	if err != nil {
		return nil, fmt.Errorf("chat: template %s: %w", opts.Name, err)
	}
	parser := opts.ToolParser
	if parser == "" {
		parser = DetectToolFormat(src)
	}
	if parser == "" {
		parser = "hermes"
	}
	format, err := LookupToolFormat(parser)
	if err != nil {
		return nil, err
	}
	eot := detectEndOfTurn(src, opts.EOS)
	if eot == "" {
		return nil, fmt.Errorf("chat: template %s: no end-of-turn token found (it writes none of %s and no eos_token is set)", opts.Name, strings.Join(turnEnds, ", "))
	}
	return &Jinja{name: opts.Name, src: src, tmpl: tmpl, opts: opts, format: format, eot: eot}, nil
}

func (j *Jinja) Name() string           { return j.name }
func (j *Jinja) Source() string         { return j.src }
func (j *Jinja) ToolFormat() ToolFormat { return j.format }
func (j *Jinja) EndOfTurn() string      { return j.eot }
func (j *Jinja) ToolCallMarkup() Markup { return j.format.Markup }

// StopStrings: the end of turn, the EOS token and the other turn and text
// ends of the known families (only those that are tokens count).
func (j *Jinja) StopStrings() []string {
	out := []string{j.eot}
	for _, s := range []string{j.opts.EOS, "<|endoftext|>", "<|eom_id|>", "<|end_of_text|>"} {
		if s != "" && s != j.eot {
			out = append(out, s)
		}
	}
	return out
}

func (j *Jinja) NewParser(opts ...ParserOption) ToolCallParser { return j.format.NewParser(opts...) }

// exec renders with the conversation's values (tr nil) or placeholders.
func (j *Jinja) exec(msgs []Message, tools []Tool, addGenerationPrompt bool, tr *tracer) (string, error) {
	mv, err := messagesValue(msgs, tr)
	if err != nil {
		return "", err
	}
	tv, err := toolsValue(tools, tr)
	if err != nil {
		return "", err
	}
	data := map[string]jinja.Value{}
	for k, v := range j.opts.Vars {
		data[k] = jinja.FromGoValue(v)
	}
	maps.Copy(data, map[string]jinja.Value{
		"messages":              mv,
		"tools":                 tv,
		"add_generation_prompt": jinja.NewBool(addGenerationPrompt),
		"bos_token":             jinja.NewString(j.opts.BOS),
		"eos_token":             jinja.NewString(j.opts.EOS),
		"__pitstop_tojson":      jinja.NewCallable("tojson", tojsonFunc),
	})
	out, err := j.tmpl.RenderValues(data)
	if err != nil {
		return "", fmt.Errorf("chat template %s: %w", j.name, err)
	}
	return out, nil
}

func (j *Jinja) Render(msgs []Message, tools []Tool, addGenerationPrompt bool) (string, error) {
	return j.exec(msgs, tools, addGenerationPrompt, nil)
}

func (j *Jinja) RenderSpans(msgs []Message, tools []Tool, addGenerationPrompt bool) (Rendered, error) {
	text, err := j.exec(msgs, tools, addGenerationPrompt, nil)
	if err != nil {
		return Rendered{}, err
	}
	tr := &tracer{}
	shape, err := j.exec(msgs, tools, addGenerationPrompt, tr)
	if err != nil {
		return Rendered{}, fmt.Errorf("chat template %s: tracing the conversation's text: %w", j.name, err)
	}
	spans, err := tr.align(text, shape)
	if err != nil {
		return Rendered{}, fmt.Errorf("chat template %s: %w", j.name, err)
	}
	return Rendered{Text: text, Spans: spans}, nil
}

func (j *Jinja) RenderToolResults(results []Message, addGenerationPrompt bool) (string, error) {
	r, err := j.RenderToolResultsSpans(results, addGenerationPrompt)
	return r.Text, err
}

// RenderToolResultsSpans renders a conversation that ends in an assistant
// turn with one call per result, followed by the results, and keeps what
// follows that turn's end token. A template that allows one call per turn
// (Llama 3.1's) gets one.
func (j *Jinja) RenderToolResultsSpans(results []Message, addGenerationPrompt bool) (Rendered, error) {
	if err := checkToolResults(j.name, results); err != nil {
		return Rendered{}, err
	}
	calls := make([]ToolCall, len(results))
	for i, r := range results {
		calls[i] = ToolCall{ID: r.ToolCallID, Name: r.Name, Arguments: "{}"}
		if calls[i].ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d", i)
		}
		if calls[i].Name == "" {
			calls[i].Name = "tool"
		}
	}
	head := []Message{{Role: RoleUser, Content: "?"}, {Role: RoleAssistant, ToolCalls: calls}}
	before, err := j.Render(head, nil, false)
	if err != nil && len(calls) > 1 {
		head[1].ToolCalls = calls[:1]
		before, err = j.Render(head, nil, false)
	}
	if err != nil {
		return Rendered{}, err
	}
	full, err := j.RenderSpans(append(head, results...), nil, addGenerationPrompt)
	if err != nil {
		return Rendered{}, err
	}
	n, cut := strings.Count(before, j.eot), 0
	for range n {
		i := strings.Index(full.Text[cut:], j.eot)
		if i < 0 {
			return Rendered{}, fmt.Errorf("chat template %s: the tool results do not follow the assistant turn's %s", j.name, j.eot)
		}
		cut += i + len(j.eot)
	}
	out := full.Slice(cut, len(full.Text))
	for i := range out.Spans {
		// A name shared with the head's call keeps the call's index.
		out.Spans[i].Msg = max(out.Spans[i].Msg-len(head), 0)
	}
	return out, nil
}
