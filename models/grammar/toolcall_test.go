package grammar

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var testTools = []ToolSpec{
	{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"],"additionalProperties":false}`)},
	{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city"]}`)},
	{Name: "ping"},
}

// TestToolCallGrammar: a call names an offered tool and its arguments
// validate against that tool's parameters.
func TestToolCallGrammar(t *testing.T) {
	g, err := CompileToolCall(testTools, "arguments")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCompiled(g, testVocab())
	for doc, want := range map[string]bool{
		`{"name": "calculator", "arguments": {"expression": "17 * 23"}}` + "\n":      true,
		`{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}`: true,
		`{"name": "ping", "arguments": {"anything": [1, true]}}`:                     true,
		`{"name": "calculator", "arguments": {"city": "Paris"}}`:                     false,
		`{"name": "lookup", "arguments": {}}`:                                        false,
		`{"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}`:  false,
	} {
		m := c.NewMatcher()
		if got := m.AcceptBytes([]byte(doc)) && m.CanEnd(); got != want {
			t.Errorf("%s: accepted %v, want %v", doc, got, want)
		}
	}
	// Random calls under the masks parse and validate.
	vals := map[string]*jsonschema.Schema{}
	for _, tl := range testTools[:2] {
		vals[tl.Name] = validator(t, string(tl.Parameters))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	n := 0
	for range 60 {
		out := generate(t, c, rng)
		if out == "" {
			continue
		}
		n++
		var call struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(out), &call); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if v := vals[call.Name]; v != nil {
			inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(call.Arguments)))
			if err := v.Validate(inst); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
		} else if call.Name != "ping" {
			t.Fatalf("%q names no tool", out)
		}
	}
	if n < 30 {
		t.Errorf("only %d of 60 calls finished", n)
	}
}
