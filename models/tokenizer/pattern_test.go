package tokenizer

import (
	"reflect"
	"testing"
)

func splitWith(t testing.TB, m matcher, s string) []string {
	t.Helper()
	var out []string
	for _, r := range m.find(s) {
		out = append(out, s[r[0]:r[1]])
	}
	return out
}

func TestGPT2PatternKnownSplits(t *testing.T) {
	m, _ := compilePattern(PatternGPT2)
	cases := []struct {
		in   string
		want []string
	}{
		{"Hello world's 123  !", []string{"Hello", " world", "'s", " 123", " ", " !"}},
		{"I'm  here\n\nnow", []string{"I", "'m", " ", " here", "\n", "\n", "now"}},
		{"don't DON'T", []string{"don", "'t", " DON", "'", "T"}},
		{"  leading", []string{" ", " leading"}},
		{"trailing   ", []string{"trailing", "   "}},
		{"a1b2 3.14", []string{"a", "1", "b", "2", " 3", ".", "14"}},
		{"héllo wörld", []string{"héllo", " wörld"}},
		{"x\t\ty", []string{"x", "\t", "\t", "y"}},
		{"!!! ??", []string{"!!!", " ??"}},
		{"日本語 テキスト", []string{"日本語", " テキスト"}},
	}
	for _, c := range cases {
		if got := splitWith(t, m, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("GPT-2 split %q = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLlama3PatternKnownSplits(t *testing.T) {
	m, _ := compilePattern(PatternLlama3)
	q, _ := compilePattern(PatternQwen2)
	cases := []struct {
		in         string
		llama, qwe []string
	}{
		{"Hello world's 12345  !", []string{"Hello", " world", "'s", " ", "123", "45", " ", " !"},
			[]string{"Hello", " world", "'s", " ", "1", "2", "3", "4", "5", " ", " !"}},
		{"DON'T stop", []string{"DON", "'T", " stop"}, []string{"DON", "'T", " stop"}},
		{"a  \n\n  b", []string{"a", "  \n\n", " ", " b"}, []string{"a", "  \n\n", " ", " b"}},
		{"x = {\"k\": 1};\n", []string{"x", " =", " {\"", "k", "\":", " ", "1", "};\n"},
			[]string{"x", " =", " {\"", "k", "\":", " ", "1", "};\n"}},
		{"\tfoo.bar()", []string{"\tfoo", ".bar", "()"}, []string{"\tfoo", ".bar", "()"}},
	}
	for _, c := range cases {
		if got := splitWith(t, m, c.in); !reflect.DeepEqual(got, c.llama) {
			t.Errorf("Llama 3 split %q = %q, want %q", c.in, got, c.llama)
		}
		if got := splitWith(t, q, c.in); !reflect.DeepEqual(got, c.qwe) {
			t.Errorf("Qwen2 split %q = %q, want %q", c.in, got, c.qwe)
		}
	}
}

var patternSeeds = []string{
	"", " ", "  ", "\n", " \n ", "Hello world's 123  !", "I've  been 'round", "'S 'RE 'Ll 'd'",
	"a\r\n\r\nb", "  \t\n x", "x \t y", "¿Qué tal?  ¡Bien!", "Ⅻ ½ ١٢٣ 4567890", "emoji 😀😀 ok",
	"tab\tsep\tvals\n", "line1\n  line2\n\n\n", "'", "''s", " 's", "a'sb", "\u00a0nbsp\u2003em",
	"x\u2028y\u0085z", "ſ 'ſ 'K", "invalid \xff\xfe bytes \xe2\x82", "mixed123abc456", "...!!!\n\n",
	"    indented code()\n        more", "{\"name\": \"f\", \"arguments\": {\"a\": [1, 2.5e3]}}",
}

func checkPatternAgree(t *testing.T, pattern, s string) {
	t.Helper()
	scan, _ := compilePattern(pattern)
	re, err := compileRegexp2(pattern)
	if err != nil {
		t.Fatal(err)
	}
	got, want := scan.find(s), re.find(s)
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("pattern %q on %q:\nscanner %q\nregexp2 %q", pattern, s, splitWith(t, scan, s), splitWith(t, re, s))
	}
}

func TestScannersAgreeWithRegexp2(t *testing.T) {
	for _, p := range []string{PatternGPT2, PatternLlama3, PatternQwen2} {
		for _, s := range patternSeeds {
			checkPatternAgree(t, p, s)
		}
	}
}

// FuzzPreTokenize checks the hand-written scanners against regexp2.
func FuzzPreTokenize(f *testing.F) {
	for _, s := range patternSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []string{PatternGPT2, PatternLlama3, PatternQwen2} {
			checkPatternAgree(t, p, s)
		}
	})
}
