package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func echoHandler(_ context.Context, args json.RawMessage) (string, error) { return string(args), nil }

func mustTool(t *testing.T, name string, params string, h Handler, opts ...Option) *Tool {
	t.Helper()
	if h == nil {
		h = echoHandler
	}
	tool, err := New(name, "test tool "+name, json.RawMessage(params), h, opts...)
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	return tool
}

func TestRegistryRegisterGetListRemove(t *testing.T) {
	r := NewRegistry()
	for _, n := range []string{"zeta", "alpha", "mid_1", "a-b"} {
		if err := r.Register(mustTool(t, n, "", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.Join(r.Names(), ","), "a-b,alpha,mid_1,zeta"; got != want {
		t.Fatalf("Names = %s, want %s", got, want)
	}
	list := r.List()
	if len(list) != 4 || list[0].Name != "a-b" || list[3].Name != "zeta" {
		t.Fatalf("List not sorted: %v", list)
	}
	tool, ok := r.Get("alpha")
	if !ok || tool.Name != "alpha" || string(tool.Parameters) != `{"type":"object","properties":{}}` {
		t.Fatalf("Get(alpha) = %+v, %v", tool, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Fatal("Get(nope) found something")
	}
	err := r.Register(mustTool(t, "alpha", "", nil))
	if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), `"alpha"`) {
		t.Fatalf("duplicate: err = %v", err)
	}
	if !r.Remove("alpha") || r.Remove("alpha") {
		t.Fatal("Remove should report true then false")
	}
	if r.Len() != 3 {
		t.Fatalf("Len = %d", r.Len())
	}
	if err := r.Register(mustTool(t, "alpha", "", nil)); err != nil {
		t.Fatalf("re-register after Remove: %v", err)
	}
}

func TestRegistryZeroValue(t *testing.T) {
	var r Registry
	if err := r.Register(mustTool(t, "x", "", nil)); err != nil {
		t.Fatal(err)
	}
	if r.Len() != 1 {
		t.Fatal("zero Registry not usable")
	}
}

func TestBadNames(t *testing.T) {
	for _, n := range []string{"", "has space", "dot.name", "slash/name", "émoji", strings.Repeat("a", 65), "tab\t"} {
		_, err := New(n, "d", nil, echoHandler)
		if !errors.Is(err, ErrInvalidName) {
			t.Errorf("name %q: err = %v, want ErrInvalidName", n, err)
		}
	}
	for _, n := range []string{"a", "A-Z_09", strings.Repeat("a", 64)} {
		if !ValidName(n) {
			t.Errorf("ValidName(%q) = false", n)
		}
	}
	// A Tool built by hand is checked by Register.
	if err := NewRegistry().Register(&Tool{Name: "bad name", Handler: echoHandler}); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("Register bad name: %v", err)
	}
	if err := NewRegistry().Register(&Tool{Name: "nohandler"}); !errors.Is(err, ErrInvalidTool) {
		t.Fatalf("Register nil handler: %v", err)
	}
	if err := NewRegistry().Register(&Tool{Name: "neg", Handler: echoHandler, MaxConcurrency: -1}); !errors.Is(err, ErrInvalidTool) {
		t.Fatalf("Register negative concurrency: %v", err)
	}
}

func TestInvalidSchema(t *testing.T) {
	cases := []struct{ schema, want string }{
		{`{"type":"object"`, "not valid JSON"},
		{`[1,2]`, "must be a JSON object"},
		{`{"type":"string"}`, `top-level "type" must be "object"`},
		{`{"type":"object","properties":{"a":{"type":"strng"}}}`, "at '/properties/a/type'"},
		{`{"type":"object","properties":{"a":{"minimum":"one"}}}`, "at '/properties/a/minimum'"},
		{`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, "external schema reference"},
		{`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, "external schema reference"},
	}
	for _, c := range cases {
		err := NewRegistry().Register(&Tool{Name: "t", Parameters: json.RawMessage(c.schema), Handler: echoHandler})
		if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("schema %s: err = %v, want ErrInvalidSchema containing %q", c.schema, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), `tool "t"`) {
			t.Errorf("error does not name the tool: %v", err)
		}
	}
	// Local $refs are fine.
	ok := `{"type":"object","$defs":{"p":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/p"}}}`
	if err := NewRegistry().Register(&Tool{Name: "t", Parameters: json.RawMessage(ok), Handler: echoHandler}); err != nil {
		t.Fatalf("local $ref: %v", err)
	}
}

func TestOpenAIDefinitions(t *testing.T) {
	r := NewRegistry()
	r.MustRegister(mustTool(t, "b", `{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`, nil))
	r.MustRegister(mustTool(t, "a", "", nil))
	b, err := json.Marshal(r.OpenAIDefinitions())
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"function","function":{"name":"a","description":"test tool a","parameters":{"type":"object","properties":{}}}},` +
		`{"type":"function","function":{"name":"b","description":"test tool b","parameters":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}]`
	if string(b) != want {
		t.Fatalf("definitions:\n got %s\nwant %s", b, want)
	}
	if d := r.OpenAIDefinitions("b", "missing"); len(d) != 1 || d[0].Function.Name != "b" {
		t.Fatalf("filtered definitions = %+v", d)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				name := fmt.Sprintf("t%d_%d", i, j)
				if err := r.Register(mustTool(t, name, "", nil)); err != nil {
					t.Error(err)
					return
				}
				r.Get(name)
				r.List()
				r.OpenAIDefinitions()
				if j%2 == 0 {
					r.Remove(name)
				}
			}
		})
	}
	wg.Wait()
	if r.Len() != 8*25 {
		t.Fatalf("Len = %d, want %d", r.Len(), 8*25)
	}
}
