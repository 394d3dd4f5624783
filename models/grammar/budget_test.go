package grammar

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// freeStringSchemas are schemas of free strings (the tiny model's trouble:
// it does not end them), optional properties, nesting and arrays.
var freeStringSchemas = append([]string{
	`{"type":"object","properties":{"name":{"type":"string"},"note":{"type":"string"},"age":{"type":"integer"}},"required":["name","note","age"],"additionalProperties":false}`,
	`{"type":"object","properties":{"title":{"type":"string","minLength":3},"tags":{"type":"array","items":{"type":"string"},"minItems":2},"extra":{"type":"object","properties":{"why":{"type":"string"}},"required":["why"]}},"required":["title","tags"]}`,
	`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"string"}},"required":["c"]}},"required":["b"]},"s":{"type":"string","maxLength":5}},"required":["a","s"]}`,
	`{"type":"array","items":{"type":"object","properties":{"q":{"type":"string"},"n":{"type":["number","null"]}},"required":["q"]},"minItems":1,"maxItems":3}`,
}, testSchemas...)

// TestCostIsReachable: from any state reached under the masks, a token
// lowers the cost by at least one, and at most Cost() such tokens complete
// a document that validates.
func TestCostIsReachable(t *testing.T) {
	v := testVocab()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range freeStringSchemas {
		g, err := Compile([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		c := NewCompiled(g, v)
		val := validator(t, s)
		for trial := range 40 {
			m := c.NewMatcher()
			var out []byte
			for range rng.IntN(30) {
				ids := allowedIDs(c, m.Mask())
				if len(ids) == 0 {
					break
				}
				id := ids[rng.IntN(len(ids))]
				if err := m.Accept(id); err != nil {
					t.Fatal(err)
				}
				out = append(out, v.bytes[id]...)
			}
			for steps := m.Cost(); m.Cost() > 0; steps-- {
				cost, next := m.Cost(), int32(-1)
				for _, id := range allowedIDs(c, m.Mask()) {
					tmp := append([]frame(nil), m.stk...)
					ok := true
					for _, b := range v.bytes[id] {
						if tmp, ok = g.step(tmp, b); !ok {
							break
						}
					}
					if ok && c.costs.cost(tmp) <= cost-1 {
						next = id
						break
					}
				}
				if next < 0 || steps == 0 {
					t.Fatalf("%s trial %d: after %q (cost %d) no token lowers the cost", s, trial, out, cost)
				}
				if err := m.Accept(next); err != nil {
					t.Fatal(err)
				}
				out = append(out, v.bytes[next]...)
			}
			if !m.CanEnd() {
				t.Fatalf("%s: %q: cost 0 but the document cannot end", s, out)
			}
			validates(t, val, s, string(out))
		}
	}
}

func allowedIDs(c *Compiled, mask Mask) []int32 {
	var ids []int32
	for id := range int32(c.v.size) {
		if mask.Has(id) && len(c.v.bytes[id]) > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

func validates(t *testing.T, val *jsonschema.Schema, schema, out string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%s: output %q does not parse: %v", schema, out, err)
	}
	if err := val.Validate(inst); err != nil {
		t.Fatalf("%s: output %q does not validate: %v", schema, out, err)
	}
}

// TestBudgetAlwaysCloses: a sampler that never ends on its own and
// prefers tokens that open or lengthen (string bodies, commas, brackets)
// still writes a complete, valid document within every token budget from
// the schema's shortest document on, when it draws under MaskWithin.
func TestBudgetAlwaysCloses(t *testing.T) {
	v := testVocab()
	end := v.end[0]
	rng := rand.New(rand.NewPCG(9, 9))
	for _, s := range freeStringSchemas {
		g, err := Compile([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		c := NewCompiled(g, v)
		val := validator(t, s)
		least := c.NewMatcher().Cost() + 1 // the shortest document, then the end token
		for budget := least; budget < least+40; budget++ {
			for range 3 {
				m := c.NewMatcher()
				var out []byte
				for left := budget; ; left-- {
					if left == 0 {
						t.Fatalf("%s: budget %d spent, output %q incomplete", s, budget, out)
					}
					mask := m.MaskWithin(left - 2) // this token and the end token
					ids := allowedIDs(c, mask)
					if len(ids) == 0 {
						if !mask.Has(end) {
							t.Fatalf("%s: nothing allowed after %q", s, out)
						}
						break
					}
					var long []int32
					for _, id := range ids {
						if !bytes.ContainsAny(v.bytes[id], `"}]`) {
							long = append(long, id)
						}
					}
					pick := ids
					if len(long) > 0 && rng.IntN(10) != 0 {
						pick = long
					}
					id := pick[rng.IntN(len(pick))]
					if err := m.Accept(id); err != nil {
						t.Fatalf("%s: masked token refused after %q: %v", s, out, err)
					}
					out = append(out, v.bytes[id]...)
				}
				if err := m.Accept(end); err != nil {
					t.Fatalf("%s: budget %d: %q: %v", s, budget, out, err)
				}
				validates(t, val, s, string(out))
			}
		}
	}
}

// TestMaskWithinLargeBudget: with room to spare the mask is Mask's.
func TestMaskWithinLargeBudget(t *testing.T) {
	g, err := Compile([]byte(freeStringSchemas[0]))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCompiled(g, testVocab())
	m := c.NewMatcher()
	if !m.AcceptBytes([]byte(`{"name": "Ann`)) {
		t.Fatal("refused")
	}
	full, within := m.Mask(), m.MaskWithin(1000)
	if full.Count() != within.Count() {
		t.Errorf("budget 1000: %d tokens, Mask has %d", within.Count(), full.Count())
	}
	// At the last moment only tokens that end the string remain.
	tight := m.MaskWithin(m.Cost() - 1)
	for _, id := range allowedIDs(c, tight) {
		if !bytes.Contains(c.v.bytes[id], []byte(`"`)) {
			t.Errorf("tight budget allows %q", c.v.bytes[id])
		}
	}
	if tight.Count() == 0 {
		t.Error("tight budget allows nothing")
	}
}

// TestBudgetClosesToolCalls: the same for a tool call's grammar, whose
// arguments are free strings: the call completes, names a tool and its
// arguments validate.
func TestBudgetClosesToolCalls(t *testing.T) {
	v := testVocab()
	end := v.end[0]
	params := []string{freeStringSchemas[0], `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}
	g, err := CompileToolCall([]ToolSpec{{Name: "who", Parameters: []byte(params[0])}, {Name: "get_weather", Parameters: []byte(params[1])}}, "arguments")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCompiled(g, v)
	vals := map[string]*jsonschema.Schema{"who": validator(t, params[0]), "get_weather": validator(t, params[1])}
	rng := rand.New(rand.NewPCG(5, 5))
	least := c.NewMatcher().Cost() + 1
	for budget := least; budget < least+60; budget++ {
		m := c.NewMatcher()
		var out []byte
		for left := budget; ; left-- {
			if left == 0 {
				t.Fatalf("budget %d spent, call %q incomplete", budget, out)
			}
			ids := allowedIDs(c, m.MaskWithin(left-2))
			if len(ids) == 0 {
				break
			}
			var long []int32
			for _, id := range ids {
				if !bytes.ContainsAny(v.bytes[id], `"}]`) {
					long = append(long, id)
				}
			}
			if len(long) > 0 {
				ids = long
			}
			id := ids[rng.IntN(len(ids))]
			if err := m.Accept(id); err != nil {
				t.Fatal(err)
			}
			out = append(out, v.bytes[id]...)
		}
		if err := m.Accept(end); err != nil {
			t.Fatalf("budget %d: %q: %v", budget, out, err)
		}
		var call struct {
			Name      string
			Arguments any
		}
		if err := json.Unmarshal(out, &call); err != nil || vals[call.Name] == nil {
			t.Fatalf("budget %d: call %q: %v", budget, out, err)
		}
		if err := vals[call.Name].Validate(call.Arguments); err != nil {
			t.Fatalf("budget %d: call %q: %v", budget, out, err)
		}
	}
}

// TestMaskWithinMatchesNaive: MaskWithin's mask (string blocks, frames
// stepped alone) equals stepping every token of Mask and keeping those
// whose cost after fits, in states reached at random, for budgets from the
// cost now less one up.
func TestMaskWithinMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	compared := 0
	for _, v := range []*Vocab{testVocab(), syntheticVocab(3000)} {
		for _, s := range freeStringSchemas {
			g, err := Compile([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			c := NewCompiled(g, v)
			for range 12 {
				m := c.NewMatcher()
				for range rng.IntN(25) {
					ids := allowedIDs(c, m.Mask())
					if len(ids) == 0 {
						break
					}
					if err := m.Accept(ids[rng.IntN(len(ids))]); err != nil {
						t.Fatal(err)
					}
				}
				now := m.Cost()
				for _, budget := range []int{now - 1, now, now + 1, now + 3} {
					got := m.MaskWithin(budget)
					for _, id := range allowedIDs(c, m.Mask()) {
						tmp := append([]frame(nil), m.stk...)
						ok := true
						for _, b := range v.bytes[id] {
							if tmp, ok = g.step(tmp, b); !ok {
								break
							}
						}
						want := ok && c.costs.cost(tmp) <= budget
						if got.Has(id) != want {
							t.Fatalf("%s, cost %d, budget %d: token %q: MaskWithin %v, naive %v", s, now, budget, v.bytes[id], got.Has(id), want)
						}
					}
					compared++
				}
			}
		}
	}
	if compared < 100 {
		t.Errorf("only %d masks compared", compared)
	}
}
