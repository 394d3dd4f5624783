package testmodel

import (
	"encoding/json"
	"sort"
)

// Example writes a JSON document that validates against schema (the
// subset constrained decoding supports): the first enum value or the
// const, "example" for strings, 1 for numbers, true for booleans, every
// declared property of an object (in name order), minItems items (at
// least one) of an array, the first branch of anyOf/oneOf. It is what the
// scripted model answers under response_format json_schema; nil schema
// (json_object) gives {"answer": "example"}.
func Example(schema json.RawMessage) string {
	var s any
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return `{"answer": "example"}`
	}
	root, _ := s.(map[string]any)
	b, err := json.Marshal(example(s, root, 0))
	if err != nil {
		return `{}`
	}
	return string(b)
}

func example(v any, root map[string]any, depth int) any {
	s, ok := v.(map[string]any)
	if !ok || depth > 8 {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		for _, p := range []string{"#/$defs/", "#/definitions/"} {
			if len(ref) > len(p) && ref[:len(p)] == p {
				defs, _ := root[p[2:len(p)-1]].(map[string]any)
				return example(defs[ref[len(p):]], root, depth+1)
			}
		}
		return example(root, root, depth+1)
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return example(alts[0], root, depth+1)
		}
	}
	t := s["type"]
	if list, ok := t.([]any); ok && len(list) > 0 {
		t = list[0]
	}
	if t == nil && s["properties"] != nil {
		t = "object"
	}
	switch t {
	case "string":
		return "example"
	case "number", "integer":
		return 1
	case "boolean":
		return true
	case "null":
		return nil
	case "array":
		n := 1
		if m, ok := s["minItems"].(float64); ok && int(m) > n {
			n = int(m)
		}
		if m, ok := s["maxItems"].(float64); ok && int(m) < n {
			n = int(m)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = example(s["items"], root, depth+1)
			if s["items"] == nil {
				out[i] = "example"
			}
		}
		return out
	}
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out[n] = example(props[n], root, depth+1)
	}
	if len(props) == 0 && t == nil {
		return "example"
	}
	return out
}
