package api

import (
	"bytes"
	"encoding/json"

	"github.com/pitstop-llm/pitstop/runtime"
)

// decodeCacheSalt checks cache_salt, vLLM's extension of the chat request:
// absent or null is none; otherwise a non-empty string of at most
// runtime.MaxCacheSaltBytes bytes. Calls of one tenant share cached prompt
// prefixes only when their cache_salt is the same; two tenants never do,
// whatever the salt (runtime.ChatRequest.CacheSalt).
func decodeCacheSalt(raw json.RawMessage) (string, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var salt string
	if raw[0] != '"' || json.Unmarshal(raw, &salt) != nil {
		return "", invalid("cache_salt", "invalid_type", "cache_salt must be a string, got %s.", jsonKind(raw))
	}
	if salt == "" {
		return "", invalid("cache_salt", "invalid_value", "cache_salt must be a non-empty string when given.")
	}
	if len(salt) > runtime.MaxCacheSaltBytes {
		return "", invalid("cache_salt", "string_above_max_length", "cache_salt has %d bytes, more than %d.", len(salt), runtime.MaxCacheSaltBytes)
	}
	return salt, nil
}

// jsonKind names the JSON type of a valid value that is not a string.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}
