package runtime

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// streamAll runs a streamed call and returns its content deltas and result.
func streamAll(t *testing.T, rt *Runtime, req ChatRequest) ([]string, *Result) {
	t.Helper()
	req.Stream = true
	c, err := rt.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var pieces []string
	for {
		ds, err := c.Recv(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Kind == DeltaContent {
				pieces = append(pieces, d.Text)
			}
		}
	}
	res, err := c.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return pieces, res
}

// TestStopSequences: the call ends before a stop sequence that spans
// several tokens, in both modes; no part of it is streamed.
func TestStopSequences(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	say := "/say The quick brown fox jumps over the lazy dog while a slow green turtle walks."
	msgs := []chat.Message{{Role: "user", Content: say}}
	stop := "lazy dog"
	// The stop sequence must span tokens for the test to mean anything.
	if n := len(rt.tok.Encode(stop, false)); n < 2 {
		t.Fatalf("stop %q is %d token(s)", stop, n)
	}
	res, err := rt.ChatSync(context.Background(), ChatRequest{Messages: msgs, Stop: []string{"nowhere", stop}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "The quick brown fox jumps over the " || res.FinishReason != "stop" {
		t.Fatalf("non-stream: %q %s", res.Content, res.FinishReason)
	}
	full, err := rt.ChatSync(context.Background(), ChatRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.CompletionTokens >= full.Usage.CompletionTokens {
		t.Errorf("stopped call generated %d tokens, the whole reply %d", res.Usage.CompletionTokens, full.Usage.CompletionTokens)
	}
	pieces, sres := streamAll(t, rt, ChatRequest{Messages: msgs, Stop: []string{stop}})
	joined := strings.Join(pieces, "")
	if joined != res.Content || sres.FinishReason != "stop" {
		t.Fatalf("stream: %q (%q) %s", joined, pieces, sres.FinishReason)
	}
	for _, p := range pieces {
		if strings.Contains(p, "lazy") || strings.Contains(p, "dog") {
			t.Errorf("a streamed piece holds part of the stop sequence: %q", p)
		}
	}
	// A stop the reply never writes changes nothing.
	none, err := rt.ChatSync(context.Background(), ChatRequest{Messages: msgs, Stop: []string{"zebra"}})
	if err != nil || none.Content != full.Content {
		t.Fatalf("unmatched stop: %q, %v", none.Content, err)
	}
	for _, bad := range [][]string{{"a", "b", "c", "d", "e"}, {""}} {
		if _, err := rt.Chat(context.Background(), ChatRequest{Messages: msgs, Stop: bad}); AsError(err).Kind != ErrInvalid {
			t.Errorf("stop %q: %v", bad, err)
		}
	}
}

// TestUndeclaredToolCallIsText: a call of a tool the request did not offer
// is never a tool call: it comes back as content, and the call stops.
func TestUndeclaredToolCallIsText(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	msgs := []chat.Message{{Role: "user", Content: "/call get_weather {\"city\": \"Paris\"}\n/call lookup {\"q\": \"x\"}"}}
	weather := chat.Tool{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	res, err := rt.ChatSync(context.Background(), ChatRequest{Messages: msgs, Tools: []chat.Tool{weather}, ParallelToolCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "get_weather" || res.FinishReason != "tool_calls" {
		t.Fatalf("tool calls %+v finish %s", res.ToolCalls, res.FinishReason)
	}
	if !strings.Contains(res.Content, `{"name": "lookup", "arguments": {"q": "x"}}`) {
		t.Fatalf("content %q", res.Content)
	}
	// Only an undeclared call: text, finish "stop"; streamed with index 0.
	msgs = []chat.Message{{Role: "user", Content: "/call lookup {\"q\": \"x\"}\n/call get_weather {}"}}
	req := ChatRequest{Messages: msgs, Tools: []chat.Tool{weather}, ParallelToolCalls: true, Stream: true}
	c, err := rt.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ds, err := c.Recv(context.Background())
		if err != nil {
			break
		}
		for _, d := range ds {
			if d.Kind == DeltaToolCallStart && (d.Index != 0 || d.Name != "get_weather") {
				t.Errorf("streamed call %+v", d)
			}
		}
	}
	res, _ = c.Wait(context.Background())
	if len(res.ToolCalls) != 1 || !strings.Contains(res.Content, `"lookup"`) {
		t.Fatalf("result %+v", res)
	}
}

// TestOfferRegistered: registered tools are offered without being
// declared only under OfferRegistered.
func TestOfferRegistered(t *testing.T) {
	ask := []chat.Message{{Role: "user", Content: "What is (17+25)*3?"}}
	rt := newTestRuntime(t, Config{})
	res, err := rt.ChatSync(context.Background(), ChatRequest{Messages: ask})
	if err != nil || len(res.Rounds) != 0 {
		t.Fatalf("declared (default): %+v %v", res, err)
	}
	rt2 := newTestRuntime(t, Config{OfferTools: OfferRegistered})
	res, err = rt2.ChatSync(context.Background(), ChatRequest{Messages: ask})
	if err != nil || len(res.Rounds) != 1 || res.Content != "The result is 126." {
		t.Fatalf("registered: %+v %v", res, err)
	}
	if _, err := ParseOfferTools("all"); err == nil {
		t.Error("--offer-tools all accepted")
	}
}
