package grammar

import (
	"encoding/json"
	"testing"
)

// FuzzCompile: the compiler never panics on any schema; a schema it
// compiles gives a grammar whose recognizer never panics on any bytes, and
// whose accepted documents are JSON.
func FuzzCompile(f *testing.F) {
	for _, s := range testSchemas {
		f.Add([]byte(s), []byte(`{"city": "Paris", "unit": "celsius"}`))
	}
	f.Add([]byte(`{"type":"array","items":{"type":["number","null"]},"minItems":2,"maxItems":3}`), []byte(`[1, null]`))
	f.Add([]byte(`{"enum":[1,"a",null,{"x":[]}]}`), []byte(`{"x":[]}`))
	f.Add([]byte(`{"$ref":"#"}`), []byte(`{}`))
	f.Add([]byte(`true`), []byte(`[1,{"a":"\u00e9"}]`))
	v := testVocab()
	f.Fuzz(func(t *testing.T, schema, doc []byte) {
		g, err := Compile(schema)
		if err != nil {
			return
		}
		c := NewCompiled(g, v)
		m := c.NewMatcher()
		ok := m.AcceptBytes(doc)
		if ok && m.CanEnd() && !json.Valid(doc) {
			t.Fatalf("schema %s accepted %q, which is not JSON", schema, doc)
		}
		// Closing within a budget: from an accepted prefix, some token
		// lowers the cost (the vocabulary has every byte).
		if cost := m.Cost(); ok && cost > 0 && cost < unreachable && len(m.stk) < MaxDepth {
			if m.MaskWithin(cost-1).Count() == 0 {
				t.Fatalf("schema %s after %q: cost %d and no token lowers it", schema, doc, cost)
			}
		}
		if len(doc) < 64 {
			m := c.NewMatcher()
			for i := range doc {
				mask := m.Mask()
				if !mask.Has(int32(doc[i])) {
					break
				}
				if err := m.Accept(int32(doc[i])); err != nil {
					t.Fatalf("masked byte %q refused: %v", doc[i], err)
				}
			}
		}
	})
}
