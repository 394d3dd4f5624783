package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RenderContent turns a tools/call result into the text the model sees as
// the tool's result: text items as they are, one after another on their own
// lines; items the model cannot read as text (images, audio, binary
// resources) described in brackets with their type and size, never dropped
// silently; an embedded text resource as its URI and its text; a resource
// link as its name, URI and description. A result with no content items but
// structured content is that structured content as JSON.
func RenderContent(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, renderItem(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}

func renderItem(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes, not played]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.ResourceLink:
		var b strings.Builder
		fmt.Fprintf(&b, "[resource link: %s <%s>", orUnknown(c.Name), c.URI)
		if c.MIMEType != "" {
			fmt.Fprintf(&b, ", %s", c.MIMEType)
		}
		if c.Description != "" {
			fmt.Fprintf(&b, ": %s", c.Description)
		}
		b.WriteString("]")
		return b.String()
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[embedded resource without contents]"
		}
		if r.Blob != nil {
			return fmt.Sprintf("[resource <%s>: %s, %d bytes of binary data, not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
		}
		head := "[resource <" + r.URI + ">"
		if r.MIMEType != "" {
			head += ", " + r.MIMEType
		}
		return head + "]\n" + r.Text
	case nil:
		return "[empty content item]"
	}
	// Content kinds added to the protocol later (tool use, tool results in
	// sampling): say what was there.
	if b, err := json.Marshal(c); err == nil {
		var kind struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &kind) == nil && kind.Type != "" {
			return fmt.Sprintf("[%s content, not shown]", kind.Type)
		}
	}
	return fmt.Sprintf("[%T content, not shown]", c)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
