package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodTrace = `{
 "0a84bcdff8434b23971032489f44b90a": [
  {"prompt_tokens": 392, "completion_tokens": 127, "api_time": 8.6e-05, "api_token_length": 21},
  {"prompt_tokens": 540, "completion_tokens": 47, "api_time": 0.7, "api_token_length": 23},
  {"prompt_tokens": 610, "completion_tokens": 48}],
 "3_1": [
  {"prompt_tokens": 20, "completion_tokens": 7, "api_time": 4.6, "api_token_length": 9, "tool": "tts"},
  {"prompt_tokens": 36, "completion_tokens": 3, "api_time": 30, "api_token_length": 5}],
 "my-agent": [{"prompt_tokens": 5, "completion_tokens": 1, "api_time": 1, "api_token_length": -2, "extra": "ignored"}, {"prompt_tokens": 9, "completion_tokens": 2}]
}`

func writeTemp(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadFileGood(t *testing.T) {
	w, err := LoadFile(writeTemp(t, goodTrace))
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "trace.json" || len(w.Programs) != 3 {
		t.Fatalf("name %q, %d programs", w.Name, len(w.Programs))
	}
	ids := []string{w.Programs[0].ID, w.Programs[1].ID, w.Programs[2].ID}
	if strings.Join(ids, ",") != "0a84bcdff8434b23971032489f44b90a,3_1,my-agent" {
		t.Errorf("file order lost: %v", ids)
	}
	c := w.Programs[0].Calls[0]
	if c.NewTokens != 392 || len(c.Segments) != 3 || c.Segments[0].Tool != "math" || c.Segments[1].Tool != "qa" ||
		c.Segments[0].Decode != 127 || c.Segments[0].ToolReturn != 21 || c.Segments[1].ToolTime != 0.7 || c.Segments[2].Tool != "" {
		t.Errorf("hex request: %+v", c)
	}
	// "3_1": explicit tool name; a trailing tool on the last segment is dropped.
	c = w.Programs[1].Calls[0]
	if c.Segments[0].Tool != "tts" || len(c.Segments) != 2 || c.Segments[1].Tool != "" || c.Segments[1].ToolTime != 0 {
		t.Errorf("3_1: %+v", c)
	}
	// Other ids: generic tool name; negative api_token_length clamped.
	c = w.Programs[2].Calls[0]
	if c.Segments[0].Tool != "tool" || c.Segments[0].ToolReturn != 0 {
		t.Errorf("my-agent: %+v", c)
	}
	notes := strings.Join(w.Notes, "\n")
	for _, want := range []string{"1 requests end in a tool call", "1 segments had a negative api_token_length", "break prompt(i+1)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string // substrings of the error
	}{
		{"empty file", ``, []string{"empty input"}},
		{"not json", `hello`, []string{"invalid character"}},
		{"array at top", `[{"prompt_tokens": 1}]`, []string{"expected a JSON object"}},
		{"empty object", `{}`, []string{"no requests"}},
		{"truncated", `{"a": [{"prompt_tokens": 1, "completion_tokens": 2}]`, []string{"EOF"}},
		{"trailing data", `{"a": [{"prompt_tokens": 1, "completion_tokens": 2}]} {}`, []string{"after the closing brace"}},
		{"duplicate id", `{"a": [{"prompt_tokens": 1, "completion_tokens": 2}], "a": [{"prompt_tokens": 1, "completion_tokens": 2}]}`, []string{`"a"`, "duplicate"}},
		{"segments not array", `{"a": {"prompt_tokens": 1}}`, []string{`request "a"`, "expected an array of segments"}},
		{"empty segments", `{"a": []}`, []string{`request "a"`, "empty segment list"}},
		{"segment not object", `{"a": [3]}`, []string{`request "a"`, "segment 0", "expected an object"}},
		{"string count", `{"a": [{"prompt_tokens": "12", "completion_tokens": 2}]}`, []string{`request "a"`, "segment 0", "prompt_tokens"}},
		{"fractional count", `{"a": [{"prompt_tokens": 1.5, "completion_tokens": 2}]}`, []string{"segment 0", "prompt_tokens"}},
		{"missing completion", `{"a": [{"prompt_tokens": 1}]}`, []string{`request "a" segment 0`, "missing completion_tokens"}},
		{"missing prompt", `{"a": [{"completion_tokens": 1}]}`, []string{"segment 0", "missing prompt_tokens"}},
		{"text only", `{"a": [{"prompt": "hi there", "completion": "hello"}]}`, []string{"text but no", "convert the trace"}},
		{"negative completion", `{"a": [{"prompt_tokens": 1, "completion_tokens": -3}]}`, []string{"completion_tokens -3"}},
		{"negative prompt", `{"a": [{"prompt_tokens": -1, "completion_tokens": 3}]}`, []string{"prompt_tokens -1"}},
		{"negative api_time", `{"a": [{"prompt_tokens": 1, "completion_tokens": 3, "api_time": -1}, {"completion_tokens": 1}]}`, []string{"api_time -1"}},
		{"middle without tool", `{"a": [{"prompt_tokens": 1, "completion_tokens": 3}, {"completion_tokens": 1}]}`, []string{"segment 0", "no api_time"}},
		{"return without time", `{"a": [{"prompt_tokens": 1, "completion_tokens": 3, "api_token_length": 4}]}`, []string{"api_token_length without api_time"}},
		{"empty prompt", `{"a": [{"prompt_tokens": 0, "completion_tokens": 3}]}`, []string{"empty prompt"}},
		{"huge count", `{"a": [{"prompt_tokens": 1, "completion_tokens": 99999999999}]}`, []string{"completion_tokens"}},
		{"null segments", `{"a": null}`, []string{"expected an array of segments"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, tc.content)
			_, err := LoadFile(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}

// FuzzLoadFile: whatever the file holds, LoadFile returns an error or a valid workload, and
// never panics. The seed corpus runs in plain go test.
func FuzzLoadFile(f *testing.F) {
	for _, s := range []string{
		goodTrace,
		``, `{}`, `[]`, `null`, `{"a": null}`, `{"a": [{}]}`,
		`{"a": [{"prompt_tokens": 1, "completion_tokens": 2}]}`,
		`{"a": [{"prompt_tokens": 1, "completion_tokens": 2, "api_time": 0}, {"completion_tokens": 0}]}`,
		`{"a": [{"prompt_tokens": 1, "completion_tokens": 2, "api_time": 1e308, "api_token_length": 16777216}, {"completion_tokens": 16777216}]}`,
		`{"a": [{"prompt": "x", "completion": "y", "api_token": "z", "api_time": 1}]}`,
		`{"a": [{"prompt_tokens": 1, "completion_tokens": 2}]`,
		`{"\u0000": [{"prompt_tokens": 1, "completion_tokens": 2, "tool": ""}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := LoadFile(path)
		if err != nil {
			if w != nil {
				t.Fatal("workload and error both returned")
			}
			return
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("LoadFile returned an invalid workload: %v", err)
		}
		s := Stats(w)
		if s.Programs == 0 || s.Segments < s.Calls || s.ToolCalls >= s.Segments {
			t.Fatalf("odd summary %+v", s)
		}
		_ = s.String()
	})
}
