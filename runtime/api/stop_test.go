package api

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// TestStopThroughAPI: go-openai's stop, non-stream and stream: the content
// ends before the multi-token stop sequence, finish_reason "stop".
func TestStopThroughAPI(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	cl := ts.client(nil)
	req := openai.ChatCompletionRequest{Model: "pitstop-scripted-test",
		Messages: []openai.ChatCompletionMessage{userMsg("/say Hello! How can I help you with the weather in Paris?")},
		Stop:     []string{"with the weather"}}
	resp, err := cl.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := "Hello! How can I help you "
	if ch := resp.Choices[0]; ch.Message.Content != want || ch.FinishReason != openai.FinishReasonStop {
		t.Fatalf("non-stream: %+v", ch)
	}
	st, err := cl.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got strings.Builder
	finish := openai.FinishReason("")
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range r.Choices {
			if strings.Contains(ch.Delta.Content, "with") {
				t.Errorf("streamed part of the stop sequence: %q", ch.Delta.Content)
			}
			got.WriteString(ch.Delta.Content)
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if got.String() != want || finish != openai.FinishReasonStop {
		t.Fatalf("stream: %q %s", got.String(), finish)
	}
}

// TestStopDecoding: stop's wrong shapes are 400s naming it.
func TestStopDecoding(t *testing.T) {
	for _, c := range []struct{ stop, param string }{
		{`5`, "stop"}, {`[1]`, "stop"}, {`["a","b","c","d","e"]`, "stop"}, {`[""]`, "stop[0]"}, {`{"a":1}`, "stop"},
	} {
		_, aerr := DecodeChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":` + c.stop + `}`))
		if aerr == nil || aerr.Param == nil || *aerr.Param != c.param {
			t.Errorf("stop %s: %+v", c.stop, aerr)
		}
	}
	for _, ok := range []string{`"x"`, `["x","y"]`, `null`} {
		p, aerr := DecodeChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":` + ok + `}`))
		if aerr != nil {
			t.Errorf("stop %s: %v", ok, aerr)
		} else if ok != "null" && len(p.Request.Stop) == 0 {
			t.Errorf("stop %s decoded to nothing", ok)
		}
	}
}
