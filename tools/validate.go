package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ErrInvalidArguments is wrapped by the Result.Err of a call whose arguments
// are not valid JSON or do not match the tool's schema.
var ErrInvalidArguments = errors.New("invalid arguments")

// argsSchema is a tool's compiled parameters schema.
type argsSchema struct {
	schema *jsonschema.Schema
}

// noLoader refuses every external reference: a tool schema must be
// self-contained ($ref to its own $defs is fine), and registering one must
// never read a file or reach the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not allowed; tool schemas must be self-contained", url)
}

// compileSchema checks that raw is a valid JSON Schema of an object and
// compiles it.
func compileSchema(name string, raw json.RawMessage) (*argsSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: not valid JSON: %v", ErrInvalidSchema, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: must be a JSON object, got %s", ErrInvalidSchema, jsonKind(doc))
	}
	// OpenAI function parameters are always an object.
	if ty, has := obj["type"]; has && ty != "object" {
		return nil, fmt.Errorf(`%w: top-level "type" must be "object", got %s`, ErrInvalidSchema, compactJSON(ty))
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	url := "urn:pitstop:tool:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		var sve *jsonschema.SchemaValidationError
		if errors.As(err, &sve) {
			if ve, ok := sve.Err.(*jsonschema.ValidationError); ok {
				return nil, fmt.Errorf("%w: not valid against the JSON Schema metaschema: %s", ErrInvalidSchema, describe(ve))
			}
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	return &argsSchema{schema: s}, nil
}

// validate parses and validates a call's arguments. It returns the arguments
// to hand to the handler ("{}" for empty input) and the parsed value, or an
// error whose text, meant for the model, says what is wrong.
func (s *argsSchema) validate(args string) (json.RawMessage, any, error) {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		trimmed = "{}"
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(trimmed))
	if err != nil {
		return nil, nil, fmt.Errorf("not valid JSON: %v", err)
	}
	// Some models send the arguments object encoded a second time, as a
	// JSON string: accept it when the string holds an object.
	if str, ok := v.(string); ok && strings.HasPrefix(strings.TrimSpace(str), "{") {
		if inner, err := jsonschema.UnmarshalJSON(strings.NewReader(str)); err == nil {
			if _, isObj := inner.(map[string]any); isObj {
				v, trimmed = inner, strings.TrimSpace(str)
			}
		}
	}
	if err := s.schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, nil, errors.New(describe(ve))
		}
		return nil, nil, err
	}
	return json.RawMessage(trimmed), v, nil
}

// maxReported bounds how many schema violations one message lists.
const maxReported = 8

// describe flattens a validation error into one line of its leaf causes:
// "at '/expression': got number, want string; at root: missing property 'x'".
func describe(ve *jsonschema.ValidationError) string {
	var parts []string
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		loc := "root"
		if len(e.InstanceLocation) > 0 {
			loc = "'" + jsonPointer(e.InstanceLocation) + "'"
		}
		part := fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer))
		if !seen[part] {
			seen[part] = true
			parts = append(parts, part)
		}
	}
	walk(ve)
	if len(parts) > maxReported {
		n := len(parts) - maxReported
		parts = append(parts[:maxReported], fmt.Sprintf("and %d more", n))
	}
	return strings.Join(parts, "; ")
}

var printer = message.NewPrinter(language.English)

// jsonPointer renders an instance location as a JSON Pointer (RFC 6901).
func jsonPointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		sb.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return sb.String()
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
