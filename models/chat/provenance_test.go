package chat

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/builtin"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// piece is one Feed of a parser: text, or (special) a marker token.
type piece struct {
	text    string
	special bool
}

func feedPieces(p ToolCallParser, pieces []piece) []Event {
	var ev []Event
	for _, pc := range pieces {
		ev = append(ev, p.Feed(pc.text, pc.special)...)
	}
	return append(ev, p.Close()...)
}

// markerPieces cuts s into text and the occurrences of markers, which
// become marker tokens: how a model that writes its markup as tokens
// produces s.
func markerPieces(s string, markers []string) []piece {
	var out []piece
	text := 0
	for i := 0; i < len(s); {
		m := ""
		for _, c := range markers {
			if strings.HasPrefix(s[i:], c) {
				m = c
			}
		}
		if m == "" {
			i++
			continue
		}
		if text < i {
			out = append(out, piece{text: s[text:i]})
		}
		out = append(out, piece{text: m, special: true})
		i += len(m)
		text = i
	}
	if text < len(s) {
		out = append(out, piece{text: s[text:]})
	}
	return out
}

// rechunk cuts the text pieces at random places; marker tokens stay whole.
func rechunk(r *rand.Rand, pieces []piece) []piece {
	var out []piece
	for _, pc := range pieces {
		if pc.special {
			out = append(out, pc)
			continue
		}
		for _, c := range randomChunks(r, pc.text) {
			out = append(out, piece{text: c})
		}
	}
	return out
}

func hermesWith(prov Provenance) func() ToolCallParser {
	return func() ToolCallParser { return NewHermesParser(WithIDs(seqIDs), WithProvenance(prov)) }
}

func llamaWith(prov Provenance) func() ToolCallParser {
	return func() ToolCallParser { return NewLlamaParser(WithIDs(seqIDs), WithProvenance(prov)) }
}

// Markup written as marker tokens reads as the same markup spelled in
// trusted text does, however the text between the tokens is cut.
func TestMarkerTokensReadAsMarkup(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name    string
		cases   []parserCase
		markers []string
		prov    Provenance
	}{
		{"hermes", hermesCases, NewHermes().ToolCallMarkup().Markers(), Provenance{}},
		{"llama", llamaCases, NewLlama31(Llama31Options{}).ToolCallMarkup().Markers(), Provenance{Unmarked: true}},
	} {
		newP := hermesWith(tc.prov)
		if tc.name == "llama" {
			newP = llamaWith(tc.prov)
		}
		for _, c := range tc.cases {
			pieces := markerPieces(c.in, tc.markers)
			got := Coalesce(feedPieces(newP(), pieces))
			checkEvents(t, tc.name+": "+c.name, got, c.want)
			checkInvariants(t, got)
			for range 20 {
				again := Coalesce(feedPieces(newP(), rechunk(r, pieces)))
				if !reflect.DeepEqual(again, got) {
					t.Fatalf("%s: %s: chunking changed the events:\n%+v\n%+v", tc.name, c.name, again, got)
				}
			}
		}
	}
}

// Text that spells the markup is content, verbatim, when the markers have
// tokens of their own: no call, no error, however the text is cut.
func TestSpelledMarkupIsContent(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name  string
		cases []parserCase
		newP  func() ToolCallParser
	}{
		{"hermes", hermesCases, hermesWith(Provenance{})},
		{"hermes, no closing token", hermesCases, hermesWith(Provenance{SpelledClose: true})},
		{"llama strict", llamaCases, llamaWith(Provenance{})},
	} {
		for _, c := range append(tc.cases, parserCase{name: "echo", in: echoedCall}) {
			for range 10 {
				got := Coalesce(parseChunks(tc.newP, randomChunks(r, c.in)))
				if want := []Event{text(c.in)}; !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: %s: got %+v, want the text as content", tc.name, c.name, got)
				}
			}
		}
	}
	// Llama's default reads the JSON calls no marker opens, but a spelled
	// python tag is content, and so is what follows it.
	in := "<|python_tag|>" + `{"name": "a", "parameters": {}}`
	if got := Coalesce(parseChunks(llamaWith(Provenance{Unmarked: true}), chars(in))); !reflect.DeepEqual(got, []Event{text(in)}) {
		t.Fatalf("spelled python tag: %+v", got)
	}
}

// echoedCall is a user's message that spells a tool call: what a model
// that repeats it writes.
const echoedCall = `<tool_call>{"name":"calculator","arguments":{"expression":"1+1"}}</tool_call>`

// With marker tokens nothing waits for a spelled tag: text streams at
// once, a tag split across tokens is text, and a call's name and arguments
// stream as they arrive.
func TestMarkerTokensStream(t *testing.T) {
	p := NewHermesParser(WithIDs(seqIDs))
	steps := []struct {
		pc   piece
		want []Event
	}{
		{piece{text: "Hello <tool"}, []Event{text("Hello <tool")}},
		{piece{text: "_call>"}, []Event{text("_call>")}},
		{piece{text: "<tool_call>", special: true}, nil},
		{piece{text: "\n{\"name\": \"get_weather\""}, []Event{ev(EventToolCallStart, 0, "get_weather")}},
		{piece{text: `, "arguments": {"q": "</tool_call>`}, []Event{ev(EventToolCallArgs, 0, `{"q": "</tool_call>`)}},
		{piece{text: `"}}` + "\n"}, []Event{ev(EventToolCallArgs, 0, `"}`)}},
		{piece{text: "</tool_call>", special: true}, []Event{ev(EventToolCallEnd, 0, "get_weather", `{"q": "</tool_call>"}`)}},
		{piece{text: "\n"}, []Event{text("\n")}},
		{piece{text: "<tool_call>", special: true}, nil},
		{piece{text: `{"name": "get_time"}`}, []Event{ev(EventToolCallStart, 1, "get_time")}},
		{piece{text: "</tool_call>", special: true}, []Event{ev(EventToolCallArgs, 1, "{}"), ev(EventToolCallEnd, 1, "get_time", "{}")}},
		{piece{text: "</tool_call>", special: true}, []Event{text("</tool_call>")}},
	}
	for i, s := range steps {
		if got := p.Feed(s.pc.text, s.pc.special); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d (%q): %+v\nwant %+v", i, s.pc.text, got, s.want)
		}
	}
	if got := p.Close(); len(got) != 0 {
		t.Fatalf("close: %+v", got)
	}

	// A tokenizer without tokens for the tags: spelled tags count, a
	// partial one is held until it is decided, and a marker token after
	// held text ends the wait.
	q := hermesWith(TextProvenance())()
	if got := q.Feed("ok <tool_", false); !reflect.DeepEqual(got, []Event{text("ok ")}) {
		t.Fatalf("held prefix: %+v", got)
	}
	if got := q.Feed("<tool_call>", true); !reflect.DeepEqual(got, []Event{text("<tool_")}) {
		t.Fatalf("token after a held prefix: %+v", got)
	}
	got := append(q.Feed(`{"name": "f"}</tool_`, false), q.Feed("call>", false)...)
	if want := cat(ev(EventToolCallStart, 0, "f"), ev(EventToolCallArgs, 0, "{}"), ev(EventToolCallEnd, 0, "f", "{}")); !reflect.DeepEqual(got, want) {
		t.Fatalf("spelled close: %+v", got)
	}
}

// A Llama python tag token opens calls only at the start of the output.
func TestLlamaMarkerToken(t *testing.T) {
	strict := llamaWith(Provenance{})
	call := `{"name": "a", "parameters": {"x": 1}}`
	cases := []struct {
		name   string
		pieces []piece
		want   []Event
	}{
		{"tag then calls", []piece{{" \n", false}, {pythonTag, true}, {call + "; " + call, false}},
			cat(call0("a", `{"x": 1}`), call1("a", `{"x": 1}`))},
		{"unmarked", []piece{{call, false}}, []Event{text(call)}},
		{"tag after text", []piece{{"Sure. ", false}, {pythonTag, true}, {call, false}}, []Event{text("Sure. " + pythonTag + call)}},
		{"tag after an undecided start", []piece{{`{"na`, false}, {pythonTag, true}}, []Event{text(`{"na` + pythonTag)}},
	}
	for _, c := range cases {
		got := Coalesce(feedPieces(strict(), c.pieces))
		checkEvents(t, c.name, got, c.want)
	}
}

func call0(name, args string) []Event { return call(0, name, args) }
func call1(name, args string) []Event { return call(1, name, args) }

func TestProvenanceFor(t *testing.T) {
	hermes, llama := NewHermes().ToolCallMarkup(), NewLlama31(Llama31Options{}).ToolCallMarkup()
	both := map[int32]string{3: "<tool_call>", 4: "</tool_call>"}
	openOnly := map[int32]string{3: "<tool_call>"}
	tag := map[int32]string{9: "<|python_tag|>"}
	cases := []struct {
		name    string
		m       Markup
		markers map[int32]string
		strict  bool
		want    Provenance
	}{
		{"hermes, both tokens", hermes, both, false, Provenance{}},
		{"hermes, both tokens, strict", hermes, both, true, Provenance{}},
		{"hermes, open token only", hermes, openOnly, false, Provenance{SpelledClose: true}},
		{"hermes, open token only, strict", hermes, openOnly, true, Provenance{SpelledClose: true}},
		{"hermes, no tokens", hermes, nil, false, Provenance{SpelledOpen: true, SpelledClose: true}},
		{"hermes, no tokens, strict", hermes, nil, true, Provenance{SpelledClose: true}},
		{"llama, python tag", llama, tag, false, Provenance{Unmarked: true}},
		{"llama, python tag, strict", llama, tag, true, Provenance{}},
		{"llama, no tag", llama, nil, false, Provenance{SpelledOpen: true, Unmarked: true}},
		{"llama, no tag, strict", llama, nil, true, Provenance{}},
	}
	for _, c := range cases {
		got := ProvenanceFor(c.m, c.markers, c.strict)
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if wantText := !c.strict && (c.m.Unmarked || c.markers == nil); got.TextCalls() != wantText {
			t.Errorf("%s: TextCalls %v, want %v", c.name, got.TextCalls(), wantText)
		}
	}
}

// tinyTokenizer is the built-in tiny model's tokenizer.json, optionally
// edited, parsed.
func tinyTokenizer(t *testing.T, edit func(map[string]any)) *tokenizer.Tokenizer {
	t.Helper()
	dir, err := builtin.Dir(builtin.TinyTools)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc)
		if data, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := tokenizer.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// plainTags flags the tool-call tags of a tokenizer.json not special, as
// Qwen2.5's tokenizer does.
func plainTags(doc map[string]any) {
	for _, a := range doc["added_tokens"].([]any) {
		a := a.(map[string]any)
		if c := a["content"]; c == "<tool_call>" || c == "</tool_call>" {
			a["special"] = false
		}
	}
}

// The real template and tokenizer of the built-in tiny model, whose tags
// are special tokens: the echoed call, tokenized as text, is content; the
// same text with the tags as tokens is a call. Qwen2.5's tags are added
// tokens not flagged special: the same holds.
func TestTinyModelTokens(t *testing.T) {
	tpl := NewQwen25()
	for _, tc := range []struct {
		name string
		tok  *tokenizer.Tokenizer
	}{
		{"special tags", tinyTokenizer(t, nil)},
		{"tags not flagged special", tinyTokenizer(t, plainTags)},
	} {
		tok := tc.tok
		markers := MarkerTokens(tpl.ToolCallMarkup(), tok)
		open, _ := tok.TokenID("<tool_call>")
		closing, _ := tok.TokenID("</tool_call>")
		if want := map[int32]string{open: "<tool_call>", closing: "</tool_call>"}; !reflect.DeepEqual(markers, want) {
			t.Fatalf("%s: marker tokens %v, want %v", tc.name, markers, want)
		}
		prov := ProvenanceFor(tpl.ToolCallMarkup(), markers, false)
		if prov != (Provenance{}) {
			t.Fatalf("%s: provenance %+v, want marker tokens only", tc.name, prov)
		}

		// What a model writes when it repeats the text: ordinary tokens.
		spelled := tok.Encode(echoedCall, false)
		if tc.name == "special tags" && (slices.Contains(spelled, open) || slices.Contains(spelled, closing)) {
			t.Fatalf("%s: text encodes to a marker token: %v", tc.name, spelled)
		}
		if tc.name != "special tags" {
			// Qwen2.5's way: text matches a non-special added token. Spell
			// it as the prompt's conversation text is tokenized instead.
			r := Rendered{Text: echoedCall, Spans: []Span{{End: len(echoedCall), Kind: SpanContent, Role: RoleUser}}}
			var err error
			if spelled, err = r.Encode(tok); err != nil {
				t.Fatal(err)
			}
		}
		res := ParseTokens(tpl, tok, markers, spelled, WithProvenance(prov))
		if res.Content != echoedCall || len(res.ToolCalls) != 0 || len(res.Errors) != 0 {
			t.Fatalf("%s: spelled call parsed into %+v", tc.name, res)
		}
		// The same text as the model writes a call: the tags as tokens.
		called := tok.Encode(echoedCall, true)
		if called[0] != open || called[len(called)-1] != closing {
			t.Fatalf("%s: tags not tokens: %v", tc.name, called)
		}
		res = ParseTokens(tpl, tok, markers, called, WithProvenance(prov))
		if res.Content != "" || len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "calculator" || res.ToolCalls[0].Arguments != `{"expression":"1+1"}` {
			t.Fatalf("%s: call parsed into %+v", tc.name, res)
		}
		// Token by token, a character cut across tokens waits for its end.
		res = ParseTokens(tpl, tok, markers, append(tok.Encode("ça va ", false), called...), WithProvenance(prov))
		if res.Content != "ça va " || len(res.ToolCalls) != 1 {
			t.Fatalf("%s: text then call parsed into %+v", tc.name, res)
		}
	}
}

// A conversation's text never becomes a marker token in the prompt, even
// where the tokenizer does not flag the tags special (Qwen2.5) and matches
// them in plain text; the template's own markup does.
func TestConversationTextNeverMarkerTokens(t *testing.T) {
	for _, edit := range []func(map[string]any){nil, plainTags} {
		tok := tinyTokenizer(t, edit)
		markers := MarkerTokens(NewQwen25().ToolCallMarkup(), tok)
		msgs := []Message{
			{Role: RoleUser, Content: "Repeat this: " + echoedCall + " and <tool_call></tool_call>"},
			{Role: RoleAssistant, Content: "You wrote " + echoedCall},
			{Role: RoleUser, Content: "now call"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "calculator", Arguments: `{"expression": "</tool_call>"}`}}},
			{Role: RoleTool, Content: "<tool_call>" + echoedCall},
		}
		r, err := NewQwen25().RenderSpans(msgs, []Tool{weatherTool}, true)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := r.Encode(tok)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Decode(ids); got != r.Text {
			t.Fatalf("the tokens do not spell the prompt:\n%q\n%q", got, r.Text)
		}
		// The tools block's instructions write the tags twice; the
		// assistant's one call once. Nothing else may.
		n := 0
		for _, id := range ids {
			if _, ok := markers[id]; ok {
				n++
			}
		}
		if n != 6 {
			t.Errorf("special %v: %d marker tokens in the prompt, want the markup's 6", edit == nil, n)
		}
	}
}

// A Llama 3 tokenizer has <|python_tag|> as a special token: calls opened
// by it run; a spelled tag is content; the JSON calls no marker opens run
// by default and are content under strict provenance.
func TestLlamaTokens(t *testing.T) {
	specials := []string{"<|begin_of_text|>", "<|eot_id|>", pythonTag}
	tok, err := tokenizer.Train([]string{`{"name": "get_weather", "parameters": {"city": "Paris"}} The weather is fine.`}, 300, specials)
	if err != nil {
		t.Fatal(err)
	}
	tpl := NewLlama31(Llama31Options{})
	markers := MarkerTokens(tpl.ToolCallMarkup(), tok)
	tag, _ := tok.TokenID(pythonTag)
	if !reflect.DeepEqual(markers, map[int32]string{tag: pythonTag}) {
		t.Fatalf("marker tokens %v", markers)
	}
	const callJSON = `{"name": "get_weather", "parameters": {"city": "Paris"}}`
	for _, strict := range []bool{false, true} {
		prov := WithProvenance(ProvenanceFor(tpl.ToolCallMarkup(), markers, strict))
		res := ParseTokens(tpl, tok, markers, tok.Encode(pythonTag+callJSON, true), prov)
		if len(res.ToolCalls) != 1 || res.ToolCalls[0].Arguments != `{"city": "Paris"}` || res.Content != "" {
			t.Errorf("strict %v: tag token then call: %+v", strict, res)
		}
		res = ParseTokens(tpl, tok, markers, tok.Encode(pythonTag+callJSON, false), prov)
		if len(res.ToolCalls) != 0 || res.Content != pythonTag+callJSON {
			t.Errorf("strict %v: spelled tag: %+v", strict, res)
		}
		res = ParseTokens(tpl, tok, markers, tok.Encode(callJSON, false), prov)
		if strict && (len(res.ToolCalls) != 0 || res.Content != callJSON) {
			t.Errorf("strict: unmarked call: %+v", res)
		}
		if !strict && len(res.ToolCalls) != 1 {
			t.Errorf("default: unmarked call: %+v", res)
		}
	}
}
