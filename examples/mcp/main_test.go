package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pitstop-llm/pitstop/tools"
	"github.com/pitstop-llm/pitstop/tools/mcp"
)

func TestCount(t *testing.T) {
	if got := count("one two\nthree é"); got != (countResult{Words: 4, Lines: 2, Chars: 15}) {
		t.Errorf("count = %+v", got)
	}
}

// The example server behind pitstop's MCP client: its tool is registered as
// words__word_count with the SDK's schema and runs through the executor.
func TestWordCountThroughPitstop(t *testing.T) {
	s := newServer()
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	reg := tools.NewRegistry()
	src, err := mcp.Start(reg, mcp.ServerSpec{Name: "words", URL: srv.URL}, mcp.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := src.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	tool, ok := reg.Get("words__word_count")
	if !ok || !strings.Contains(string(tool.Parameters), `"required":["text"]`) {
		t.Fatalf("registered %v, %+v", reg.Names(), tool)
	}
	ex, err := tools.NewExecutor(reg, tools.ExecutorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if r := ex.Run(ctx, tools.Call{Name: "words__word_count", Arguments: `{"text": "one two three"}`}); r.IsError || r.Content != "3 words, 1 lines, 13 characters" {
		t.Errorf("call: %+v", r)
	}
	if r := ex.Run(ctx, tools.Call{Name: "words__word_count", Arguments: `{"text": "  "}`}); !r.IsError || !strings.Contains(r.Content, "text is empty") {
		t.Errorf("empty text: %+v", r)
	}
}
