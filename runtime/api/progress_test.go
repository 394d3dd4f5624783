package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
)

// progressChunk is a stream chunk as a client that knows pitstop's
// extension reads it.
type progressChunk struct {
	openai.ChatCompletionStreamResponse
	Pitstop *struct {
		ToolRound      *runtime.Round `json:"tool_round"`
		ToolRoundStart *runtime.Round `json:"tool_round_start"`
	} `json:"pitstop"`
}

// With X-Pitstop-Stream-Progress, a streamed call shows its server-side
// tool round while the tool runs: the model's call, the handling decision
// and why, before the tool returns; then the result. go-openai's stream
// reader (RecvRaw, and Recv for the typed client) takes every chunk.
func TestStreamProgress(t *testing.T) {
	gate := make(chan struct{})
	reg := gatedTools(t, gate)
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Tools: reg}})
	req := openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Stream: true, Tools: []openai.Tool{decl("gate")},
		Messages: []openai.ChatCompletionMessage{userMsg("/pre Checking.\n/call gate {}")}}

	s, err := ts.client(map[string]string{HeaderStreamProgress: "1"}).CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	timer := time.AfterFunc(10*time.Second, func() { t.Error("no tool_round_start chunk while the tool ran"); close(gate) })
	var order []string
	var content strings.Builder
	opened := false
	for {
		raw, err := s.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var c progressChunk
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("chunk %s: %v", raw, err)
		}
		switch {
		case c.Pitstop != nil && c.Pitstop.ToolRoundStart != nil:
			r := c.Pitstop.ToolRoundStart
			if opened || len(r.Calls) != 1 || r.Calls[0].Name != "gate" || r.Calls[0].Arguments != "{}" || r.Calls[0].Content != "" ||
				(r.Handling != "preserve" && r.Handling != "swap" && r.Handling != "discard") || len(c.Choices) != 0 {
				t.Errorf("tool_round_start chunk %s", raw)
			}
			order = append(order, "start")
			if timer.Stop() { // the tool is still waiting: let it return
				opened = true
				close(gate)
			}
		case c.Pitstop != nil && c.Pitstop.ToolRound != nil:
			r := c.Pitstop.ToolRound
			if len(r.Calls) != 1 || r.Calls[0].Content != "opened" || r.Duration <= 0 {
				t.Errorf("tool_round chunk %s", raw)
			}
			order = append(order, "round")
		default:
			for _, ch := range c.Choices {
				content.WriteString(ch.Delta.Content)
				if ch.Delta.Content != "" && (len(order) == 0 || order[len(order)-1] != "content") {
					order = append(order, "content")
				}
			}
		}
	}
	if got := strings.Join(order, ","); got != "content,start,round,content" {
		t.Errorf("stream order %s, want content,start,round,content", got)
	}
	if !strings.HasPrefix(content.String(), "Checking.") {
		t.Errorf("content %q", content.String())
	}

	// The typed reader of go-openai takes the extension chunks too (they
	// have no choices, like the usage chunk); without the header there is
	// no start chunk and the round's chunk comes with the next output.
	for _, progress := range []string{"1", ""} {
		s, err := ts.client(map[string]string{HeaderStreamProgress: progress}).CreateChatCompletionStream(context.Background(),
			openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Stream: true, Tools: []openai.Tool{calculatorDecl()},
				Messages: []openai.ChatCompletionMessage{userMsg("What is (17+25)*3?")}})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		finish := openai.FinishReason("")
		for {
			resp, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("progress %q: %v", progress, err)
			}
			for _, ch := range resp.Choices {
				text.WriteString(ch.Delta.Content)
				if ch.FinishReason != "" {
					finish = ch.FinishReason
				}
			}
		}
		s.Close()
		if text.String() != "The result is 126." || finish != openai.FinishReasonStop {
			t.Errorf("progress %q: content %q, finish %q", progress, text.String(), finish)
		}
	}
	starts := func(progress string) int {
		s, err := ts.client(map[string]string{HeaderStreamProgress: progress}).CreateChatCompletionStream(context.Background(),
			openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Stream: true, Tools: []openai.Tool{calculatorDecl()},
				Messages: []openai.ChatCompletionMessage{userMsg("What is (17+25)*3?")}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		n := 0
		for {
			raw, err := s.RecvRaw()
			if err != nil {
				break
			}
			if strings.Contains(string(raw), `"tool_round_start"`) {
				n++
			}
		}
		return n
	}
	if a, b := starts("true"), starts(""); a != 1 || b != 0 {
		t.Errorf("tool_round_start chunks: %d with the header, %d without; want 1 and 0", a, b)
	}
}
