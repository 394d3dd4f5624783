package grammar

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// testVocab is a byte-level vocabulary: the 256 bytes, JSON pieces of
// several bytes, and an end token (id len-1).
func testVocab() *Vocab {
	var toks [][]byte
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	for _, s := range []string{`{"`, `":`, `": `, `", "`, `"}`, `}}`, `null`, `true`, `false`, `12`, `3.5`, `e+7`,
		`"city`, `"unit`, `celsius`, `Paris`, ` Lon`, `don`, `\u00e9`, `é`, `, `, `[1, `, `]}`, `"name": "`, `"arguments": {`} {
		toks = append(toks, []byte(s))
	}
	toks = append(toks, nil)
	return NewVocab(toks, []int32{int32(len(toks) - 1)})
}

// validator compiles a JSON Schema for the checks (testutil.SchemaValidator).
func validator(t testing.TB, schema string) *jsonschema.Schema {
	return testutil.SchemaValidator(t, schema)
}

var testSchemas = []string{
	`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3}},"required":["n","tags"]}`,
	`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"},{"type":"array","items":{"type":"integer"}}]},"c":{"const":"fixed"}},"required":["v","c"]}`,
	`{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["name"]}},"$ref":"#/$defs/node"}`,
	`{"type":"object"}`,
	`{"type":["object","null"],"properties":{"a":{"type":"object","additionalProperties":{"type":"integer"}}}}`,
}

// generate writes a random document under the grammar's masks: each token
// drawn among the allowed ones (half the time among those that close
// something, so that strings end), the end token once allowed half the
// time.
func generate(t *testing.T, c *Compiled, rng *rand.Rand) string {
	t.Helper()
	m := c.NewMatcher()
	var out []byte
	end := c.v.end[0]
	for range 400 {
		mask := m.Mask()
		if mask.Has(end) && rng.IntN(2) == 0 {
			if err := m.Accept(end); err != nil {
				t.Fatal(err)
			}
			return string(out)
		}
		var all, closing []int32
		for id := range int32(c.v.size) {
			if mask.Has(id) && id != end {
				all = append(all, id)
				if bytes.ContainsAny(c.v.bytes[id], `"}]`) {
					closing = append(closing, id)
				}
			}
		}
		if len(all) == 0 {
			if !mask.Has(end) {
				t.Fatalf("no token allowed after %q", out)
			}
			_ = m.Accept(end)
			return string(out)
		}
		pick := all
		if len(closing) > 0 && rng.IntN(2) == 0 {
			pick = closing
		}
		id := pick[rng.IntN(len(pick))]
		if err := m.Accept(id); err != nil {
			t.Fatalf("masked token refused after %q: %v", out, err)
		}
		out = append(out, c.v.bytes[id]...)
	}
	return ""
}

// TestMaskedOutputValidates: whatever tokens a sampler draws under the
// masks, a finished output parses and validates against its schema.
func TestMaskedOutputValidates(t *testing.T) {
	v := testVocab()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range testSchemas {
		g, err := Compile([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		c := NewCompiled(g, v)
		val := validator(t, s)
		done := 0
		for range 60 {
			out := generate(t, c, rng)
			if out == "" {
				continue
			}
			done++
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
			if err != nil {
				t.Fatalf("%s: output %q does not parse: %v", s, out, err)
			}
			if err := val.Validate(inst); err != nil {
				t.Fatalf("%s: output %q does not validate: %v", s, out, err)
			}
		}
		if done < 30 {
			t.Errorf("%s: only %d of 60 outputs finished", s, done)
		}
	}
}

// TestAcceptsAndRejects: the recognizer takes valid documents and refuses
// invalid ones at the first wrong byte.
func TestAcceptsAndRejects(t *testing.T) {
	v := testVocab()
	cases := []struct {
		schema, doc string
		ok          bool
	}{
		{testSchemas[0], `{"city": "Paris", "unit": "celsius"}`, true},
		{testSchemas[0], `{"unit":"fahrenheit","city":"Lon\"don é"}`, true},
		{testSchemas[0], `{"city": "Paris"}`, false},                              // unit required
		{testSchemas[0], `{"city": "Paris", "unit": "kelvin"}`, false},            // not in the enum
		{testSchemas[0], `{"city": "Paris", "city": "Rome", "unit": "c"}`, false}, // twice
		{testSchemas[0], `{"city": "Paris", "unit": "celsius", "x": 1}`, false},   // undeclared
		{testSchemas[1], `{"n": -0, "tags": ["a"], "x": 1.5e-3}`, true},
		{testSchemas[1], `{"n": 1.5, "tags": ["a"]}`, false},           // integer
		{testSchemas[1], `{"n": 01, "tags": ["a"]}`, false},            // leading zero
		{testSchemas[1], `{"n": 1, "tags": []}`, false},                // minItems
		{testSchemas[1], `{"n": 1, "tags": ["a","b","c","d"]}`, false}, // maxItems
		{testSchemas[2], `{"v": null, "c": "fixed"}`, true},
		{testSchemas[2], `{"v": [1, 2], "c": "fixed"}`, true},
		{testSchemas[2], `{"v": 3, "c": "fixed"}`, false},
		{testSchemas[3], `{"name": "a", "kids": [{"name": "b", "kids": []}]}`, true},
		{testSchemas[4], `{"a": [1, {"b": null}], "c": "\u00e9"}`, true},
		{testSchemas[4], `[1]`, false},
		{testSchemas[4], "{\"a\": \"\x01\"}", false}, // control byte
		{testSchemas[4], "{\"a\": \"\xff\"}", false}, // not UTF-8
		{testSchemas[5], `null`, true},
		{testSchemas[5], `{"a": {"x": 1, "y": 2}}`, true},
		{testSchemas[5], `{"a": {"x": "s"}}`, false},
	}
	for i, c := range cases {
		g, err := Compile([]byte(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		m := NewCompiled(g, v).NewMatcher()
		ok := m.AcceptBytes([]byte(c.doc)) && m.CanEnd()
		if ok != c.ok {
			t.Errorf("case %d: %s: accepted %v, want %v", i, c.doc, ok, c.ok)
		}
	}
}

// TestUnsupportedSchema: unsupported keywords are errors naming them.
func TestUnsupportedSchema(t *testing.T) {
	for kw, s := range map[string]string{
		"pattern":     `{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}`,
		"minimum":     `{"type":"integer","minimum":3}`,
		"allOf":       `{"allOf":[{"type":"string"}]}`,
		"format":      `{"type":"string","format":"date"}`,
		"start alike": `{"anyOf":[{"type":"object"},{"type":"object","properties":{"a":{}}}]}`,
	} {
		_, err := Compile([]byte(s))
		var ue *UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), kw) {
			t.Errorf("%s: %v", kw, err)
		}
	}
	for _, bad := range []string{`[`, `{"type":"strin"}`, `{"required":["a"],"properties":{"b":{}}}`, `false`} {
		if _, err := Compile([]byte(bad)); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
}

// TestMaskCached: a state's mask is computed once.
func TestMaskCached(t *testing.T) {
	g, _ := Compile([]byte(testSchemas[0]))
	c := NewCompiled(g, testVocab())
	for range 3 {
		m := c.NewMatcher()
		m.Mask()
		if !m.AcceptBytes([]byte(`{"city": "P`)) {
			t.Fatal("refused")
		}
		m.Mask()
	}
	if n := c.CachedMasks(); n != 2 {
		t.Errorf("%d masks cached, want 2", n)
	}
}

// TestStringLength: minLength and maxLength count characters.
func TestStringLength(t *testing.T) {
	g, err := Compile([]byte(`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3}},"required":["s"]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCompiled(g, testVocab())
	for doc, want := range map[string]bool{`{"s": "ab"}`: true, `{"s": "aé\n"}`: true, `{"s": "a"}`: false, `{"s": "abcd"}`: false, `{"s": "\u00e9\u00e9"}`: true} {
		m := c.NewMatcher()
		if got := m.AcceptBytes([]byte(doc)) && m.CanEnd(); got != want {
			t.Errorf("%s: %v, want %v", doc, got, want)
		}
	}
}

// TestMaskApply: Apply refuses exactly the tokens outside the mask, across
// runs of refused words and a partial last word.
func TestMaskApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 63, 64, 65, 700, 10000} {
		m := make(Mask, (n+63)/64)
		for id := range int32(n) {
			if rng.IntN(10) == 0 || (id > 128 && id < 9000 && rng.IntN(50) != 0) {
				continue
			}
			m.set(id)
		}
		logits := make([]float32, n)
		m.Apply(logits)
		for id := range int32(n) {
			if got := logits[id] == 0; got != m.Has(id) {
				t.Fatalf("n %d token %d: kept %v, in mask %v", n, id, got, m.Has(id))
			}
		}
	}
}

// TestStringFastPathMatchesWalk: in a string the mask taken from the
// tokens that stay in it plus those that close it stepped through equals
// the trie walk's, on a real vocabulary too (o200k_base's first 40,000
// ranks: multi-byte characters, tokens that split them, quotes with
// punctuation).
func TestStringFastPathMatchesWalk(t *testing.T) {
	compared := 0
	defer func() {
		if compared < 10 {
			t.Errorf("only %d string states compared", compared)
		}
	}()
	for _, v := range []*Vocab{testVocab(), syntheticVocab(5000), tiktokenVocab(t, "o200k_base", 40000)} {
		for _, s := range testSchemas {
			g, err := Compile([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			c := NewCompiled(g, v)
			for _, prefix := range []string{`{"city": "`, `{"city": "Pa`, `{"v": "x`, `{"name": "a", "kids": [{"name": "`, `{"k": "`, `{"a": {"x`, `{"tags": ["`} {
				m := c.NewMatcher()
				if !m.AcceptBytes([]byte(prefix)) {
					continue
				}
				top := m.stk[len(m.stk)-1]
				if n := g.nodes[top.node]; n.kind != kString || top.st != strBody {
					continue
				}
				compared++
				fast, walk := c.compute(m.stk), c.walkAll(m.stk)
				for id := range int32(v.size) {
					if fast.Has(id) != walk.Has(id) {
						t.Fatalf("%s after %q: token %q fast %v walk %v", s, prefix, v.bytes[id], fast.Has(id), walk.Has(id))
					}
				}
			}
		}
	}
}
