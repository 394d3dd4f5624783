package mcp

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	s, err := ParseSpec(`everything=npx -y "@modelcontextprotocol/server-everything" 'a b'`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "everything" || !s.Stdio() || !slices.Equal(s.Command, []string{"npx", "-y", "@modelcontextprotocol/server-everything", "a b"}) {
		t.Errorf("stdio spec %+v", s)
	}
	h, err := ParseSpec("docs=https://mcp.example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if h.Stdio() || h.URL != "https://mcp.example.com/mcp" {
		t.Errorf("http spec %+v", h)
	}
	for _, bad := range []string{"", "noequals", "=cmd", "x=", "a__b=cmd", "bad.name=cmd", "x=http://", "x=https:///path", `x=cmd "unclosed`} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) accepted", bad)
		}
	}
}

func TestParseHeader(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	srv, k, v, err := ParseHeader("docs=authorization: Bearer ${TOKEN}", lookup)
	if err != nil || srv != "docs" || k != "Authorization" || v != "Bearer s3cret" {
		t.Errorf("got %q %q %q %v", srv, k, v, err)
	}
	if _, _, _, err := ParseHeader("docs=X-Key: $MISSING", lookup); err == nil || !strings.Contains(err.Error(), "MISSING") {
		t.Errorf("unset variable: %v", err)
	}
	for _, bad := range []string{"docs", "docs=novalue", "=X: y", "docs=: y", "docs=X Y: z"} {
		if _, _, _, err := ParseHeader(bad, lookup); err == nil {
			t.Errorf("ParseHeader(%q) accepted", bad)
		}
	}
}
