package mcp

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Separator joins a server's name and its tool's name in pitstop's name of
// the tool. OpenAI's tool names allow no '.', so "SERVER.tool" cannot be
// used; a server name holds no "__" (ValidServerName), so the first "__"
// of a name ends the server's part and two servers' tools never collide.
const Separator = "__"

// maxToolName is OpenAI's limit on a tool name (tools.ValidName).
const maxToolName = 64

// hashLen is the number of hex digits of the hash that ends a shortened or
// disambiguated name.
const hashLen = 8

// ToolName is the name pitstop gives tool of server when nothing collides
// with it: server + "__" + tool, each character of tool outside
// [a-zA-Z0-9_-] replaced by '_'; a name longer than 64 characters keeps its
// first 55 and ends in '_' and the first 8 hex digits of the SHA-256 of the
// MCP tool name. AssignNames settles collisions.
func ToolName(server, tool string) string {
	name := server + Separator + sanitize(tool)
	if len(name) > maxToolName {
		return hashed(name, tool)
	}
	return name
}

// AssignNames maps each MCP tool name of one server to its pitstop name.
// Names that need no change (tool already matches [a-zA-Z0-9_-] and the
// whole fits in 64) are kept as ToolName gives them. When two tools would
// get the same name (e.g. "a.b" and "a_b"), the tool whose name needed no
// change keeps it, else the first in byte order does; the others end in
// '_' and 8 hex digits of the SHA-256 of their MCP name. The result depends
// only on the set of names, not on their order. Empty names are left out.
func AssignNames(server string, tools []string) map[string]string {
	type candidate struct {
		mcp, name string
		exact     bool
	}
	cands := make([]candidate, 0, len(tools))
	for _, t := range tools {
		if t == "" {
			continue
		}
		n := ToolName(server, t)
		cands = append(cands, candidate{mcp: t, name: n, exact: n == server+Separator+t})
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.mcp, b.mcp)
	})
	out := make(map[string]string, len(cands))
	taken := make(map[string]bool, len(cands))
	for _, c := range cands {
		if _, dup := out[c.mcp]; dup {
			continue
		}
		name := c.name
		if taken[name] {
			name = hashed(name, c.mcp)
		}
		if taken[name] { // two SHA-256 prefixes equal: leave the later tool out
			continue
		}
		taken[name] = true
		out[c.mcp] = name
	}
	return out
}

// sanitize replaces each character outside [a-zA-Z0-9_-] by '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// hashed shortens name to leave room for '_' and the hash of the MCP tool
// name, and appends them.
func hashed(name, tool string) string {
	sum := sha256.Sum256([]byte(tool))
	keep := min(len(name), maxToolName-1-hashLen)
	return name[:keep] + "_" + hex.EncodeToString(sum[:])[:hashLen]
}
