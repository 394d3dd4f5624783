// Package testmodel is pitstop's built-in SCRIPTED TEST MODEL. It is not a
// language model and is for tests only: given the conversation, it writes a
// reply chosen by fixed rules (below), which the runtime forces token by
// token through the same path a real model's sampled tokens take (streaming
// detokenizer, the chat template's streaming tool-call parser, pauses at
// tool calls). It lets the runtime, the OpenAI-compatible server and their
// clients be tested end to end before real weights are served.
//
// The model speaks ChatML with Hermes tool calls (the "hermes" template:
// Qwen2.5's format without the default system prompt). Its tokenizer is a
// small byte-level BPE trained once per process with tokenizer.Train from a
// fixed corpus (Corpus): byte-level, so any text encodes, and trained, so
// a token stands for ~3 characters of the usual replies, as with a real
// tokenizer. Like the built-in tiny model's, it has special tokens of its
// own for the tool-call tags: the model writes its calls with them, and
// its text (ReplyRendered's spans) as text, even where it spells a tag.
//
// Rules, applied to the last user message and the turns after it:
//
//   - An "/echo" line in the last user message: the reply is the message's
//     other lines, verbatim, as text, whatever the tools (a model repeating
//     what it was given, tool-call markup included).
//   - tool_choice "none", or no tools offered: a text answer.
//   - Directive lines in the last user message (one per line):
//     "/call NAME {json}" calls tool NAME with those arguments (several
//     lines: parallel calls in one turn, or only the first when parallel
//     tool calls are off); "/pre TEXT" writes TEXT before the calls;
//     "/repeat" calls again after every tool result (a loop, for the
//     runtime's loop guard); "/say TEXT" is the final answer; "/long N"
//     makes the final answer N filler words.
//   - Otherwise, an arithmetic expression in the message (e.g. "What is
//     (17+25)*3?") and a calculator tool offered: a calculator call.
//   - tool_choice "required" with nothing above: a call of the first
//     offered tool with an Example of its parameters; a named tool_choice:
//     a call of that tool (with the expression for the calculator, else an
//     Example of its parameters).
//   - After tool results: "The result is X." quoting the results (a
//     directive's "/say" text wins), or the calls again with "/repeat".
//   - Anything else: "You said: ..." echoing the message.
//   - Under response_format json_schema or json_object, a text answer is
//     replaced by Example of the schema (a tool call stays a tool call).
package testmodel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// Name is the model id the runtime serves the scripted model under.
const Name = "pitstop-scripted-test"

// Special tokens of the model's tokenizer (ChatML, and the Hermes
// tool-call tags).
const (
	EndOfText     = "<|endoftext|>"
	ImStart       = "<|im_start|>"
	ImEnd         = "<|im_end|>"
	ToolCallOpen  = "<tool_call>"
	ToolCallClose = "</tool_call>"
)

// VocabSize is the size of the trained vocabulary.
const VocabSize = 2048

// Choice is the request's tool_choice: Mode "auto" (default), "none",
// "required", or "function" with Name.
type Choice struct {
	Mode string
	Name string
}

// Conversation is what the model reads to write its next turn.
type Conversation struct {
	Messages []chat.Message
	Tools    []chat.Tool // tools offered to the model
	Choice   Choice
	// Parallel allows several tool calls in one turn.
	Parallel bool
	// JSON asks for a JSON answer (response_format): an Example of
	// Schema (nil: json_object) instead of a text answer.
	JSON   bool
	Schema json.RawMessage
}

// Model is the scripted test model. It is safe for concurrent use.
type Model struct {
	tok  *tokenizer.Tokenizer
	tmpl chat.Template
}

var (
	trainOnce sync.Once
	trained   *tokenizer.Tokenizer
	trainErr  error
)

// New returns the scripted model; the tokenizer is trained on first use and
// shared afterwards.
func New() (*Model, error) {
	trainOnce.Do(func() {
		t, err := tokenizer.Train(Corpus(), VocabSize, []string{EndOfText, ImStart, ImEnd, ToolCallOpen, ToolCallClose})
		if err == nil {
			err = t.SetSpecialTokens("", ImEnd)
		}
		trained, trainErr = t, err
	})
	if trainErr != nil {
		return nil, fmt.Errorf("testmodel: training the tokenizer: %w", trainErr)
	}
	return &Model{tok: trained, tmpl: chat.NewHermes()}, nil
}

// Name is the model id.
func (m *Model) Name() string { return Name }

// Tokenizer is the model's tokenizer.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return m.tok }

// Template is the model's chat template (hermes).
func (m *Model) Template() chat.Template { return m.tmpl }

// Reply is the text of the model's next assistant turn, without the end
// token: content, then any tool calls in the Hermes format, exactly as the
// template renders an assistant message with those calls (so the next
// request's prompt starts with this turn's tokens and finds its KV in the
// prefix cache).
func (m *Model) Reply(c Conversation) string { return m.ReplyRendered(c).Text }

// ReplyRendered is Reply with the spans of the turn's text (its content
// and its calls' JSON): Rendered.Encode gives the tokens the model writes,
// the template's tags as their special tokens and the text as text.
func (m *Model) ReplyRendered(c Conversation) chat.Rendered {
	content, calls := m.decide(c)
	if c.JSON && len(calls) == 0 {
		content = Example(c.Schema)
	}
	r, err := m.tmpl.RenderSpans([]chat.Message{{Role: chat.RoleAssistant, Content: content, ToolCalls: calls}}, nil, false)
	if err != nil {
		msg := "I could not write the tool call: " + err.Error()
		return chat.Rendered{Text: msg, Spans: []chat.Span{{End: len(msg), Kind: chat.SpanContent, Role: chat.RoleAssistant}}}
	}
	// The assistant turn without its header and end.
	start := len(ImStart + "assistant")
	if strings.HasPrefix(r.Text[start:], "\n") {
		start++
	}
	return r.Slice(start, len(r.Text)-len(ImEnd+"\n"))
}

// directives are the script lines of a user message.
type directives struct {
	calls  []chat.ToolCall
	echo   bool
	lines  []string // the lines that are not "/echo", for the echo
	pre    string
	say    string
	long   int
	repeat bool
	any    bool
}

func parseDirectives(msg string) directives {
	var d directives
	for _, raw := range strings.Split(msg, "\n") {
		line := strings.TrimSpace(raw)
		if line == "/echo" {
			d.echo, d.any = true, true
			continue
		}
		d.lines = append(d.lines, raw)
		cmd, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch cmd {
		case "/call":
			name, args, _ := strings.Cut(rest, " ")
			args = strings.TrimSpace(args)
			if args == "" {
				args = "{}"
			}
			d.calls = append(d.calls, chat.ToolCall{Name: name, Arguments: args})
		case "/pre":
			d.pre = rest
		case "/say":
			d.say = rest
		case "/long":
			d.long, _ = strconv.Atoi(rest)
			d.long = min(max(d.long, 0), 100000)
		case "/repeat":
			d.repeat = true
		default:
			continue
		}
		d.any = true
	}
	return d
}

var exprRE = regexp.MustCompile(`[-(]*\d[\d.\s]*(?:[-+*/^%()]+[\s(]*\d[\d.\s]*\)*)+`)

// Expression returns the arithmetic expression in text ("" if none): the
// longest run of numbers joined by operators.
func Expression(text string) string {
	best := ""
	for _, m := range exprRE.FindAllString(text, -1) {
		m = strings.TrimSpace(m)
		if len(m) > len(best) {
			best = m
		}
	}
	// Balance parentheses the match may have cut.
	open := strings.Count(best, "(") - strings.Count(best, ")")
	for ; open > 0 && strings.HasPrefix(best, "("); open-- {
		best = best[1:]
	}
	for ; open < 0 && strings.HasSuffix(best, ")"); open++ {
		best = best[:len(best)-1]
	}
	return strings.TrimSpace(best)
}

func (m *Model) decide(c Conversation) (string, []chat.ToolCall) {
	last := -1 // last user message
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == chat.RoleUser {
			last = i
			break
		}
	}
	user := ""
	if last >= 0 {
		user = c.Messages[last].Content
	}
	d := parseDirectives(user)
	var results []chat.Message
	for i := len(c.Messages) - 1; i > last; i-- {
		if c.Messages[i].Role != chat.RoleTool {
			break
		}
		results = append([]chat.Message{c.Messages[i]}, results...)
	}
	offered := map[string]bool{}
	for _, t := range c.Tools {
		offered[t.Name] = true
	}
	toolsOn := len(c.Tools) > 0 && c.Choice.Mode != "none"

	if len(results) > 0 && !(toolsOn && d.repeat) {
		return answer(d, results), nil
	}
	if d.echo {
		return strings.Join(d.lines, "\n"), nil
	}
	if !toolsOn {
		return textAnswer(d, user, len(c.Tools) > 0), nil
	}
	expr := Expression(user)
	var calls []chat.ToolCall
	switch {
	case c.Choice.Mode == "function":
		args := "{}"
		for _, dc := range d.calls {
			if dc.Name == c.Choice.Name {
				args = dc.Arguments
				break
			}
		}
		if args == "{}" && c.Choice.Name == "calculator" && expr != "" {
			args = calcArgs(expr)
		}
		if args == "{}" {
			args = exampleArgs(c.Tools, c.Choice.Name)
		}
		calls = []chat.ToolCall{{Name: c.Choice.Name, Arguments: args}}
	case len(d.calls) > 0:
		calls = d.calls
	case expr != "" && offered["calculator"]:
		calls = []chat.ToolCall{{Name: "calculator", Arguments: calcArgs(expr)}}
	case c.Choice.Mode == "required":
		calls = []chat.ToolCall{{Name: c.Tools[0].Name, Arguments: exampleArgs(c.Tools, c.Tools[0].Name)}}
	default:
		return textAnswer(d, user, true), nil
	}
	if !c.Parallel && len(calls) > 1 {
		calls = calls[:1]
	}
	for i := range calls {
		if !json.Valid([]byte(calls[i].Arguments)) {
			calls[i].Arguments = "{}"
		}
	}
	return d.pre, calls
}

// exampleArgs are arguments that validate against the named tool's
// parameters ({} when it declares none).
func exampleArgs(tools []chat.Tool, name string) string {
	for _, t := range tools {
		if t.Name == name && len(t.Parameters) > 0 {
			return Example(t.Parameters)
		}
	}
	return "{}"
}

func calcArgs(expr string) string {
	b, _ := json.Marshal(map[string]string{"expression": expr})
	return string(b)
}

// quoteMax bounds how much of a tool result the answer quotes.
const quoteMax = 300

func quote(s string) string {
	s = strings.TrimSpace(s)
	truncated := strings.Contains(s, "[truncated:")
	if len(s) > quoteMax {
		cut := quoteMax
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	if truncated && !strings.Contains(s, "[truncated:") {
		s += " (the tool's output was truncated)"
	}
	return s
}

func answer(d directives, results []chat.Message) string {
	if d.long > 0 {
		return filler(d.long)
	}
	if d.say != "" {
		return d.say
	}
	if len(results) == 1 {
		r := quote(results[0].Content)
		if strings.HasPrefix(r, "error:") {
			return "The tool reported an error: " + strings.TrimSpace(strings.TrimPrefix(r, "error:"))
		}
		return "The result is " + r + "."
	}
	parts := make([]string, len(results))
	for i, r := range results {
		parts[i] = fmt.Sprintf("(%d) %s", i+1, quote(r.Content))
	}
	return "The results are: " + strings.Join(parts, "; ") + "."
}

func textAnswer(d directives, user string, hadTools bool) string {
	switch {
	case d.long > 0:
		return filler(d.long)
	case d.say != "":
		return d.say
	case d.any:
		return "I will not call tools now."
	}
	if e := Expression(user); e != "" && hadTools {
		return "I was asked not to use tools, so I cannot compute " + e + " exactly."
	}
	u := strings.TrimSpace(user)
	if len(u) > 200 {
		cut := 200
		for cut > 0 && u[cut]&0xC0 == 0x80 {
			cut--
		}
		u = u[:cut] + "…"
	}
	if u == "" {
		return "Hello! How can I help?"
	}
	return "You said: " + u
}

var fillerWords = strings.Fields("the quick brown fox jumps over the lazy dog while a slow green turtle walks along the river bank and counts every stone it passes on the way home")

// filler returns n words of filler text.
func filler(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fillerWords[i%len(fillerWords)])
	}
	b.WriteByte('.')
	return b.String()
}

// Corpus is the fixed text the tokenizer is trained on: the template's
// boilerplate, the replies the rules write, JSON of tool calls and numbers.
func Corpus() []string {
	base := []string{
		"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is (17+25)*3?<|im_end|>\n<|im_start|>assistant\n",
		"# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>",
		"\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n",
		`{"type": "function", "function": {"name": "calculator", "description": "Evaluate an arithmetic expression exactly and return the number. Use it for any arithmetic instead of computing in your head.", "parameters": {"type": "object", "properties": {"expression": {"type": "string", "description": "Arithmetic expression, e.g. (2+3)*4^2 or sqrt(2)/3."}}, "required": ["expression"], "additionalProperties": false}}}`,
		`{"type": "function", "function": {"name": "current_time", "description": "Current date and time in a time zone", "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}}}}`,
		"<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"(17+25)*3\"}}\n</tool_call>",
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>",
		"\n<|im_start|>user\n<tool_response>\n126\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
		"The result is 126. The results are: (1) 42; (2) 7. The tool reported an error: tool timed out.",
		"You said: hello, how are you today? I will not call tools now. Hello! How can I help?",
		"I was asked not to use tools, so I cannot compute this exactly.",
		"What is the weather in Paris, London, Tokyo and New York? Please compute 12.5 * 4 - 3 / 2 + 1000.",
		strings.Join(fillerWords, " "),
		"0 1 2 3 4 5 6 7 8 9 10 11 12 16 20 25 32 42 64 100 126 128 256 512 1000 1024 2048",
		"error: invalid arguments for tool: missing property; unknown tool; registered tools: calculator, current_time, unit_convert",
	}
	var out []string
	for range 8 {
		out = append(out, base...)
	}
	return out
}
