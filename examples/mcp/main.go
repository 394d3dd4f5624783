// Command mcp is a small MCP server written with the official Go SDK, for
// trying pitstop's MCP support: one tool, word_count, that counts the words,
// lines and characters of a text. It speaks MCP over stdin/stdout (the
// default) or over streamable HTTP (-http ADDR).
//
// Let pitstop start it and run its tool server-side (named words__word_count
// by pitstop's naming rule, NAME__tool):
//
//	go build -o bin/pitstop ./cmd/pitstop && go build -o bin/wordcount-mcp ./examples/mcp
//	bin/pitstop serve --mcp "words=bin/wordcount-mcp"
//	curl -s localhost:8080/v1/tools/words__word_count/invoke -d '{"arguments": {"text": "one two three"}}'
//
// or serve it over HTTP and point pitstop at the URL:
//
//	bin/wordcount-mcp -http 127.0.0.1:8090 &
//	bin/pitstop serve --mcp "words=http://127.0.0.1:8090/mcp"
//
// pitstop serves its own tools to MCP clients at /mcp:
//
//	npx @modelcontextprotocol/inspector --cli http://127.0.0.1:8080/mcp --transport http --method tools/list
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// countArgs are word_count's arguments.
type countArgs struct {
	Text string `json:"text" jsonschema:"the text to count"`
}

// countResult is word_count's structured result.
type countResult struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Chars int `json:"chars"`
}

// count counts a text's words, lines and characters (runes).
func count(text string) countResult {
	lines := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		lines++
	}
	return countResult{Words: len(strings.Fields(text)), Lines: lines, Chars: utf8.RuneCountInString(text)}
}

// newServer is the MCP server with its one tool.
func newServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "wordcount", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "word_count", Description: "Count the words, lines and characters of a text"},
		func(_ context.Context, _ *sdk.CallToolRequest, a countArgs) (*sdk.CallToolResult, countResult, error) {
			if strings.TrimSpace(a.Text) == "" {
				return nil, countResult{}, errors.New("text is empty: give some words to count")
			}
			r := count(a.Text)
			msg := fmt.Sprintf("%d words, %d lines, %d characters", r.Words, r.Lines, r.Chars)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}}, r, nil
		})
	return s
}

func main() {
	addr := flag.String("http", "", "serve streamable HTTP at this address (path /mcp) instead of stdio")
	flag.Parse()
	s := newServer()
	if *addr == "" {
		if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	hs := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "wordcount MCP server at http://%s/mcp\n", *addr)
	log.Fatal(hs.ListenAndServe())
}
