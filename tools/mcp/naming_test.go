package mcp

import (
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/tools"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, c := range []struct{ server, tool, want string }{
		{"everything", "add", "everything__add"},
		{"fs", "read_file", "fs__read_file"},
		{"gh", "repos.list", "gh__repos_list"},
		{"gh", "café/menu", "gh__caf__menu"},
		{"s", long, "s__" + strings.Repeat("x", 52) + "_"},
	} {
		got := ToolName(c.server, c.tool)
		if !strings.HasPrefix(got, c.want) || !tools.ValidName(got) {
			t.Errorf("ToolName(%q, %q) = %q, want prefix %q and a valid OpenAI name", c.server, c.tool, got, c.want)
		}
		if len(c.tool) < 50 && got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	if got := ToolName("s", long); len(got) != 64 {
		t.Errorf("long name %q has %d characters, want 64", got, len(got))
	}
	if ToolName("s", long) == ToolName("s", long+"y") {
		t.Error("two long names that differ only past the cut got the same name")
	}
}

func TestAssignNamesCollisions(t *testing.T) {
	// "a.b" and "a_b" both sanitize to "a_b": the exact one keeps it.
	got := AssignNames("srv", []string{"a.b", "a_b", "c"})
	if got["a_b"] != "srv__a_b" || got["c"] != "srv__c" {
		t.Errorf("exact names changed: %v", got)
	}
	if n := got["a.b"]; n == "srv__a_b" || !strings.HasPrefix(n, "srv__a_b_") || len(n) != len("srv__a_b_")+8 {
		t.Errorf("colliding name %q, want srv__a_b_ and 8 hex digits", n)
	}
	// Two inexact names collide: the first in byte order keeps the plain name.
	got2 := AssignNames("srv", []string{"x/y", "x.y"})
	if got2["x.y"] != "srv__x_y" || got2["x/y"] == "srv__x_y" {
		t.Errorf("inexact collision: %v", got2)
	}
	// The result does not depend on the order of the listing.
	got3 := AssignNames("srv", []string{"c", "a_b", "a.b"})
	for k, v := range got {
		if got3[k] != v {
			t.Errorf("order changed %q: %q vs %q", k, v, got3[k])
		}
	}
	// Every name is distinct and valid; empty names are left out.
	all := AssignNames("srv", []string{"", "p.q", "p_q", "p-q", "p q", strings.Repeat("z", 80), strings.Repeat("z", 81)})
	if _, ok := all[""]; ok || len(all) != 6 {
		t.Errorf("names %v", all)
	}
	seen := map[string]bool{}
	for mcpName, n := range all {
		if !tools.ValidName(n) || seen[n] {
			t.Errorf("%q → %q: invalid or duplicate", mcpName, n)
		}
		seen[n] = true
	}
}

func TestValidServerName(t *testing.T) {
	for name, want := range map[string]bool{
		"everything": true, "my-server": true, "my_server": true, "a1": true,
		"": false, "a__b": false, "a_": false, "_a": false, "a.b": false, "a b": false, "a--b": false,
		strings.Repeat("a", 32): true, strings.Repeat("a", 33): false,
	} {
		if got := ValidServerName(name); got != want {
			t.Errorf("ValidServerName(%q) = %v, want %v", name, got, want)
		}
	}
}
