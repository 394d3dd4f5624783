package api

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
)

// A stream whose call fails after it began (here: the runtime closes under
// it, as at the end of a shutdown) ends with an error event and then
// [DONE], and the response ends cleanly; go-openai reports the error, not
// the end of a stream.
func TestStreamFailureEndsWithDone(t *testing.T) {
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Pace: 0.2}, noChk: true})
	resp, err := http.Post(ts.http.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"pitstop-scripted-test","stream":true,"messages":[{"role":"user","content":"/long 5000"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sdk, err := ts.client(nil).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("/long 5000")}, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sdk.Close()
	r := bufio.NewReader(resp.Body)
	var events []string
	for len(events) < 5 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("before the failure: %v", err)
		}
		if ev, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			events = append(events, ev)
		}
	}
	if _, err := sdk.Recv(); err != nil {
		t.Fatal(err)
	}

	if err := ts.rt.Close(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	for _, line := range strings.Split(string(rest), "\n") {
		if ev, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, ev)
		}
	}
	n := len(events)
	if events[n-1] != "[DONE]" || !strings.HasPrefix(events[n-2], `{"error":{`) || !strings.Contains(events[n-2], `"code":"server_shutting_down"`) {
		t.Errorf("the stream ends %q, want an error event then [DONE]", events[n-2:])
	}
	for _, ev := range events[:n-2] {
		if strings.Contains(ev, `"error"`) || ev == "[DONE]" {
			t.Errorf("event before the end: %q", ev)
		}
	}

	for {
		_, err := sdk.Recv()
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "runtime stopped") {
			t.Errorf("go-openai: %v, want the server's error", err)
		}
		break
	}
}
