package jsondepth

import (
	"encoding/json"
	"strings"
	"testing"
)

// refused reports whether encoding/json refuses data for its depth.
func refused(data []byte) bool {
	var v any
	err := json.Unmarshal(data, &v)
	return err != nil && strings.Contains(err.Error(), "exceeded max depth")
}

func nested(open, close string, depth int, inner string) string {
	return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
}

// TestExceedsAsEncodingJSON: valid texts at and past the limit, with
// brackets in strings and escaped quotes, are refused by encoding/json
// exactly when Exceeds says so.
func TestExceedsAsEncodingJSON(t *testing.T) {
	cases := []string{
		`{"a":[1,2,{"b":"[[[{{{"}]}`,
		nested("[", "]", Max, ""),
		nested("[", "]", Max+1, ""),
		nested("[", "]", Max-1, `{"a":1}`),
		nested("[", "]", Max, `{"a":1}`),
		nested("[", "]", Max, `"\"]]]"`),
		`["` + strings.Repeat("[", 3*Max) + `"]`, // brackets in a string only
		`["\\",` + nested("[", "]", Max, "") + `]`,
		`["\\\"[",` + nested("{\"k\":", "}", Max-1, "0") + `]`,
		`[` + strings.Repeat(`[],`, 2*Max) + `[]]`, // many, never deep
		nested("{\"k\":", "}", Max+1, "0"),
	}
	for _, c := range cases {
		data := []byte(c)
		if !json.Valid(data) && !refused(data) {
			t.Fatalf("case %.40q... is not valid JSON", c)
		}
		if got, want := Exceeds(data), refused(data); got != want {
			t.Errorf("case %.40q... (%d bytes): Exceeds %v, encoding/json refuses it for its depth: %v", c, len(c), got, want)
		}
	}
}

// FuzzExceeds: for any text encoding/json takes or refuses for its depth
// alone, Exceeds agrees; past the quick count, texts are made deep by
// wrapping the fuzzer's in Max arrays.
func FuzzExceeds(f *testing.F) {
	f.Add(`{"a":"]"}`, 0)
	f.Add(`[["\\"]]`, 1)
	f.Add(`"\""`, 2)
	f.Fuzz(func(t *testing.T, inner string, extra int) {
		extra = extra % 4
		if extra < 0 {
			extra = -extra
		}
		data := []byte(nested("[", "]", Max-2+extra, inner))
		var v any
		err := json.Unmarshal(data, &v)
		if err != nil && !refused(data) {
			return // invalid for another reason: either answer is fine
		}
		if got, want := Exceeds(data), err != nil; got != want {
			t.Fatalf("%q wrapped %d deep: Exceeds %v, refused for depth %v", inner, Max-2+extra, got, want)
		}
	})
}

func BenchmarkExceeds(b *testing.B) {
	body := []byte(`{"model":"m","messages":[` + strings.Repeat(`{"role":"user","content":"lorem ipsum dolor sit amet"},`, 400) + `{"role":"user","content":"x"}]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if Exceeds(body) {
			b.Fatal("deep")
		}
	}
}
