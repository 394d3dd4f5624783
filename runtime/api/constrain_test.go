package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	openai "github.com/sashabaranov/go-openai"
)

const itemSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1},"qty":{"type":"integer"},"tags":{"type":"array","items":{"enum":["a","b"]},"maxItems":2}},"required":["name","qty","tags"],"additionalProperties":false}`

// TestResponseFormatThroughAPI: go-openai's json_schema response format:
// 100 of 100 answers parse and validate (scripted model, constrained and
// checked token by token), and bad response formats are 400s naming the
// parameter, unsupported schema features named in the message.
func TestResponseFormatThroughAPI(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	cl := ts.client(nil)
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(itemSchema))
	c := jsonschema.NewCompiler()
	_ = c.AddResource("s.json", doc)
	val, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	req := openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("an item please")},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "item", Schema: json.RawMessage(itemSchema), Strict: true}}}
	for i := range 100 {
		resp, err := cl.CreateChatCompletion(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(resp.Choices[0].Message.Content))
		if err != nil || val.Validate(inst) != nil {
			t.Fatalf("answer %d %q: %v", i, resp.Choices[0].Message.Content, err)
		}
	}
	for _, c := range []struct{ rf, param, text string }{
		{`{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string","format":"date"}}}`, "response_format.json_schema.schema", "format"},
		{`{"type":"xml"}`, "response_format.type", ""},
		{`{"type":"json_schema"}`, "response_format.json_schema", ""},
		{`"json"`, "response_format", ""},
	} {
		status, body := ts.do("POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}],"response_format":`+c.rf+`}`, nil)
		wantError(t, status, body, 400, c.param)
		if msg, _ := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, c.text) {
			t.Errorf("%s: message %q lacks %q", c.rf, msg, c.text)
		}
	}
}

// TestLogprobsThroughAPI: logprobs in OpenAI's shape, non-stream and
// stream, as go-openai reads them.
func TestLogprobsThroughAPI(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	cl := ts.client(nil)
	req := openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("/say Good morning, world.")},
		LogProbs: true, TopLogProbs: 2}
	resp, err := cl.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	lp := resp.Choices[0].LogProbs
	if lp == nil || len(lp.Content) == 0 {
		t.Fatalf("no logprobs: %+v", resp.Choices[0])
	}
	var b strings.Builder
	for _, e := range lp.Content {
		b.WriteString(e.Token)
		if len(e.TopLogProbs) != 1 || e.LogProb != 0 || len(e.Bytes) != len(e.Token) {
			t.Errorf("entry %+v", e)
		}
	}
	if b.String() != resp.Choices[0].Message.Content {
		t.Errorf("tokens %q, content %q", b.String(), resp.Choices[0].Message.Content)
	}
	st, err := cl.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var toks, text strings.Builder
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range r.Choices {
			text.WriteString(ch.Delta.Content)
			if ch.Logprobs != nil {
				for _, e := range ch.Logprobs.Content {
					toks.WriteString(e.Token)
				}
			}
		}
	}
	if toks.String() != text.String() || text.String() != resp.Choices[0].Message.Content {
		t.Errorf("stream: tokens %q, text %q", toks.String(), text.String())
	}
	status, body := ts.do("POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}],"top_logprobs":3}`, nil)
	wantError(t, status, body, 400, "top_logprobs")
	status, body = ts.do("POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":21}`, nil)
	wantError(t, status, body, 400, "top_logprobs")
}
