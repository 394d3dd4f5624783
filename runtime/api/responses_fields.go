package api

import (
	"bytes"
	"encoding/json"
	"sort"
)

// responsesField says what pitstop does with a field of a Responses
// request: nil, it is decoded with the request (responsesRequest) or taken
// as a hint; otherwise check returns the 400 for a value pitstop does not
// support (a field at its default value — null, false, an empty list — is
// always fine).
type responsesField func(raw json.RawMessage) *APIError

// responsesFields are the fields of OpenAI's "Create a model response"
// request body, in the reference's order. Any other field is a 400
// naming it, as OpenAI answers.
var responsesFields = map[string]responsesField{
	"background":             nil,
	"conversation":           unsupported("conversation", "conversation objects are not supported; chain responses with previous_response_id."),
	"context_management":     unsupported("context_management", "context_management is not supported."),
	"include":                unsupported("include", "include is not supported: pitstop has no hosted tools, images, files or reasoning items whose data could be included."),
	"input":                  nil,
	"instructions":           nil,
	"max_output_tokens":      nil,
	"max_tool_calls":         unsupported("max_tool_calls", "max_tool_calls is not supported."),
	"metadata":               nil,
	"model":                  nil,
	"parallel_tool_calls":    nil,
	"previous_response_id":   nil,
	"prompt":                 unsupported("prompt", "prompt templates are not supported; send input and instructions."),
	"prompt_cache_key":       stringField("prompt_cache_key"), // a hint: pitstop's prefix cache needs none
	"prompt_cache_retention": oneOf("prompt_cache_retention", "in_memory"),
	"reasoning":              unsupported("reasoning", "reasoning is not supported: pitstop's models are not reasoning models."),
	"safety_identifier":      stringField("safety_identifier"),
	"service_tier":           oneOf("service_tier", "auto", "default"),
	"store":                  nil,
	"stream":                 nil,
	"stream_options":         nil,
	"temperature":            nil,
	"text":                   nil,
	"tool_choice":            nil,
	"tools":                  nil,
	"top_logprobs":           unsupported("top_logprobs", "top_logprobs is not supported by the Responses API here; use chat completions' logprobs."),
	"top_p":                  nil,
	"truncation":             oneOf("truncation", "disabled"),
	"user":                   stringField("user"),
}

// checkResponsesFields answers a request body's fields: unknown ones and
// unsupported values are 400s naming the field (the first in sorted order).
func checkResponsesFields(body []byte) *APIError {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil // decodeObject reports the malformed body
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		check, known := responsesFields[k]
		if !known {
			return invalid(k, "unknown_parameter", "Unrecognized request argument supplied: %s", k)
		}
		if check != nil && !isDefault(fields[k]) {
			if aerr := check(fields[k]); aerr != nil {
				return aerr
			}
		}
	}
	return nil
}

// isDefault reports whether a field's value is its default: null, false,
// 0, an empty list or object.
func isDefault(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "null", "false", "0", "[]", "{}", `""`:
		return true
	}
	return false
}

func unsupported(name, msg string) responsesField {
	return func(json.RawMessage) *APIError { return invalid(name, "unsupported_parameter", "%s", msg) }
}

func stringField(name string) responsesField {
	return func(raw json.RawMessage) *APIError {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return invalid(name, "invalid_type", "%s must be a string.", name)
		}
		return nil
	}
}

// oneOf accepts the values pitstop supports of a string field.
func oneOf(name string, supported ...string) responsesField {
	return func(raw json.RawMessage) *APIError {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return invalid(name, "invalid_type", "%s must be a string.", name)
		}
		for _, v := range supported {
			if s == v {
				return nil
			}
		}
		return invalid(name, "unsupported_value", "%s %q is not supported; supported: %q.", name, s, supported)
	}
}
