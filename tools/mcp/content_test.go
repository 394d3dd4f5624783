package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRenderContent(t *testing.T) {
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "first"},
		&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 42)},
		&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 7)},
		&sdk.ResourceLink{URI: "test://static/1", Name: "Resource 1", MIMEType: "text/plain", Description: "a link"},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "inside"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b.bin", Blob: []byte{1, 2, 3}}},
	}}
	got := RenderContent(res)
	for _, want := range []string{
		"first\n",
		"[image: image/png, 42 bytes, not shown]",
		"[audio: audio/wav, 7 bytes, not played]",
		"[resource link: Resource 1 <test://static/1>, text/plain: a link]",
		"[resource <file:///a.txt>, text/plain]\ninside",
		"[resource <file:///b.bin>: unknown type, 3 bytes of binary data, not shown]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered content lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 6 {
		t.Errorf("%d lines, want 7 (one per item, the embedded text on its own):\n%s", n+1, got)
	}
	structured := &sdk.CallToolResult{StructuredContent: map[string]any{"t": 21.5}}
	if got := RenderContent(structured); got != `{"t":21.5}` {
		t.Errorf("structured only: %q", got)
	}
	if got := RenderContent(nil); got != "" {
		t.Errorf("nil: %q", got)
	}
}
