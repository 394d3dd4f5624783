package tools

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type weatherArgs struct {
	City  string   `json:"city" jsonschema:"description=City name\\, e.g. Paris"`
	Unit  string   `json:"unit,omitempty" jsonschema:"enum=c,enum=f"`
	Days  int      `json:"days,omitempty" jsonschema:"minimum=1,maximum=7"`
	Tags  []string `json:"tags,omitempty"`
	Inner *struct {
		Lat float64 `json:"lat"`
	} `json:"inner,omitempty"`
}

func TestSchemaFor(t *testing.T) {
	raw, err := SchemaFor[weatherArgs]()
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s["type"] != "object" || s["additionalProperties"] != false {
		t.Fatalf("schema root: %s", raw)
	}
	for _, k := range []string{"$schema", "$id", "$ref", "$defs"} {
		if _, has := s[k]; has {
			t.Errorf("schema has %s: %s", k, raw)
		}
	}
	if !reflect.DeepEqual(s["required"], []any{"city"}) {
		t.Errorf("required = %v", s["required"])
	}
	props := s["properties"].(map[string]any)
	city := props["city"].(map[string]any)
	if city["type"] != "string" || city["description"] != "City name, e.g. Paris" {
		t.Errorf("city = %v", city)
	}
	if !reflect.DeepEqual(props["unit"].(map[string]any)["enum"], []any{"c", "f"}) {
		t.Errorf("unit = %v", props["unit"])
	}
	days := props["days"].(map[string]any)
	if days["type"] != "integer" || days["minimum"] != 1.0 || days["maximum"] != 7.0 {
		t.Errorf("days = %v", days)
	}
	if inner := props["inner"].(map[string]any); inner["type"] != "object" {
		t.Errorf("inner not inlined: %v", inner)
	}

	if _, err := SchemaFor[int](); !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("SchemaFor[int]: %v", err)
	}
	raw, err = SchemaFor[struct{}]()
	if err != nil || !strings.Contains(string(raw), `"properties":{}`) {
		t.Errorf("empty struct schema = %s, %v", raw, err)
	}
}

func TestFuncDecodesValidatedArgs(t *testing.T) {
	var got weatherArgs
	tool, err := Func("weather", "Weather", func(ctx context.Context, a weatherArgs) (map[string]any, error) {
		got = a
		return map[string]any{"city": a.City, "temp": 21.5}, nil
	}, WithMaxConcurrency(2))
	if err != nil {
		t.Fatal(err)
	}
	if tool.MaxConcurrency != 2 {
		t.Fatalf("option not applied: %+v", tool)
	}
	ex := newTestExecutor(t, ExecutorConfig{}, tool)
	res := ex.Run(context.Background(), Call{ID: "c1", Name: "weather", Arguments: `{"city":"Paris","unit":"c","days":3,"inner":{"lat":48.85}}`})
	if res.IsError {
		t.Fatalf("error result: %s", res.Content)
	}
	if got.City != "Paris" || got.Unit != "c" || got.Days != 3 || got.Inner == nil || got.Inner.Lat != 48.85 {
		t.Fatalf("decoded args = %+v", got)
	}
	if res.Content != `{"city":"Paris","temp":21.5}` {
		t.Fatalf("content = %s", res.Content)
	}

	cases := []struct{ args, want string }{
		{`{}`, `error: invalid arguments for tool "weather": at root: missing property 'city'`},
		{`{"city":3}`, `at '/city': got number, want string`},
		{`{"city":"x","unit":"k"}`, `at '/unit': value must be one of 'c', 'f'`},
		{`{"city":"x","days":9}`, `at '/days': maximum: got 9, want 7`},
		{`{"city":"x","extra":1}`, `additional properties 'extra' not allowed`},
		{`{"city":`, `error: invalid arguments for tool "weather": not valid JSON`},
		{`[1]`, `got array, want object`},
	}
	for _, c := range cases {
		res := ex.Run(context.Background(), Call{ID: "c2", Name: "weather", Arguments: c.args})
		if !res.IsError || !strings.Contains(res.Content, c.want) || !errors.Is(res.Err, ErrInvalidArguments) {
			t.Errorf("args %s: result %+v, want error containing %q", c.args, res, c.want)
		}
		var ae *ArgumentsError
		if !errors.As(res.Err, &ae) || ae.Tool != "weather" {
			t.Errorf("args %s: Err = %#v", c.args, res.Err)
		}
	}
}

func TestFuncStringResultAndError(t *testing.T) {
	type noArgs struct{}
	tool, err := Func("hello", "Hi", func(ctx context.Context, _ noArgs) (string, error) { return "hi there", nil })
	if err != nil {
		t.Fatal(err)
	}
	failing, err := Func("fails", "Fails", func(ctx context.Context, _ noArgs) (string, error) {
		return "", errors.New("backend down")
	})
	if err != nil {
		t.Fatal(err)
	}
	ex := newTestExecutor(t, ExecutorConfig{}, tool, failing)
	// Empty arguments mean {}.
	if res := ex.Run(context.Background(), Call{Name: "hello"}); res.IsError || res.Content != "hi there" {
		t.Fatalf("hello: %+v", res)
	}
	res := ex.Run(context.Background(), Call{Name: "fails", Arguments: "{}"})
	if !res.IsError || res.Content != `error: tool "fails" failed: backend down` || res.Err == nil || res.Err.Error() != "backend down" {
		t.Fatalf("fails: %+v", res)
	}
	if _, err := Func[noArgs, string]("bad name!", "", func(context.Context, noArgs) (string, error) { return "", nil }); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("bad name: %v", err)
	}
}
