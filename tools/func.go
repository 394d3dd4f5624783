package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

// Func builds a tool from a typed Go function. The parameters schema is
// generated from Args (a struct): property names from `json` tags, fields
// without `omitempty`/`omitzero` are required, extra properties are refused,
// and `jsonschema:"description=...,enum=a,enum=b,minimum=1"` tags add
// keywords (github.com/invopop/jsonschema; write a comma inside a value as
// `\\,`). The executor validates the arguments against that schema before
// decoding them into Args.
//
// The function's result becomes the tool's output: a string (or []byte,
// json.RawMessage) as is, anything else as JSON.
//
//	type weatherArgs struct {
//		City string `json:"city" jsonschema:"description=City name"`
//		Unit string `json:"unit,omitempty" jsonschema:"enum=c,enum=f"`
//	}
//	t, err := tools.Func("weather", "Current weather in a city",
//		func(ctx context.Context, a weatherArgs) (string, error) { ... })
func Func[Args, Out any](name, description string, fn func(ctx context.Context, args Args) (Out, error), opts ...Option) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w %q: nil function", ErrInvalidTool, name)
	}
	params, err := SchemaFor[Args]()
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	h := func(ctx context.Context, raw json.RawMessage) (string, error) {
		var args Args
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", &ArgumentsError{Tool: name, Detail: err.Error()}
		}
		out, err := fn(ctx, args)
		if err != nil {
			return "", err
		}
		return formatOutput(out)
	}
	return New(name, description, params, h, opts...)
}

// SchemaFor returns the JSON Schema Func generates for Args: self-contained
// (no $ref, no $schema, no $id) and of type object.
func SchemaFor[Args any]() (json.RawMessage, error) {
	t := reflect.TypeFor[Args]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct && t.Kind() != reflect.Map {
		return nil, fmt.Errorf("%w: arguments type %v must be a struct (or a map), the model always sends an object", ErrInvalidSchema, t)
	}
	r := &jsonschema.Reflector{Anonymous: true, DoNotReference: true, ExpandedStruct: true}
	s := r.ReflectFromType(t)
	s.Version = ""
	if s.Type == "object" && s.Properties == nil && t.Kind() == reflect.Struct {
		// An empty struct: say "no properties" explicitly, as OpenAI wants.
		s.Properties = jsonschema.NewProperties()
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	return b, nil
}

// formatOutput turns a typed function's result into the tool's output.
func formatOutput(v any) (string, error) {
	switch o := v.(type) {
	case string:
		return o, nil
	case []byte:
		return string(o), nil
	case json.RawMessage:
		return string(o), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding result as JSON: %w", err)
	}
	return string(b), nil
}
