package predictor

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTraceRoundTrip(t *testing.T) {
	recs := toyRecords(20, 8)
	d := 1.5
	recs[3].ToolDurationS = &d
	recs[3].FeatureVersion = 0 // AppendTrace fills it
	var buf bytes.Buffer
	for _, r := range recs {
		if err := AppendTrace(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != len(recs) {
		t.Fatalf("%d lines for %d records", n, len(recs))
	}
	dir := t.TempDir()
	p1 := filepath.Join(dir, "a.jsonl")
	os.WriteFile(p1, append(buf.Bytes(), "\n\n"...), 0o644) // blank lines are fine
	p2 := filepath.Join(dir, "b.jsonl")
	if err := WriteTraces(p2, recs[:5]); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTraces(p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	recs[3].FeatureVersion = FeatureVersion
	if len(got) != 25 || !reflect.DeepEqual(got[:20], recs) || *got[3].ToolDurationS != 1.5 {
		t.Fatalf("round trip differs")
	}
}

func TestReadTracesErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	good := `{"feature_version":1,"input":{"prompt_tokens":5,"history":{"calls":0,"mean_output_tokens":0,"last_output_tokens":0}},"segment":0,"pre_tool_output_tokens":3}`
	cases := []struct {
		name, content, want string
	}{
		{"empty.jsonl", "", "empty.jsonl: no trace records (empty file)"},
		{"blank.jsonl", "\n  \n", "blank.jsonl: no trace records"},
		{"malformed.jsonl", good + "\n{\"feature_version\":1,\n", "malformed.jsonl:2:"},
		{"notjson.jsonl", "hello\n", "notjson.jsonl:1:"},
		{"unknown.jsonl", good + "\n" + `{"feature_version":1,"bogus":3}`, `malformed.jsonl:2`},
		{"version.jsonl", strings.Replace(good, `"feature_version":1`, `"feature_version":7`, 1), "version.jsonl:1: feature_version 7, this build reads 1"},
		{"noversion.jsonl", `{"pre_tool_output_tokens":3}`, "noversion.jsonl:1: no feature_version"},
		{"negative.jsonl", strings.Replace(good, `"pre_tool_output_tokens":3`, `"pre_tool_output_tokens":-3`, 1), "negative.jsonl:1: negative token count"},
		{"duration.jsonl", strings.Replace(good, `"segment":0`, `"segment":0,"tool_duration_s":-2`, 1), "duration.jsonl:1: tool_duration_s -2"},
		{"two.jsonl", good + " " + good, "two.jsonl:1: more than one JSON value"},
	}
	for _, c := range cases {
		p := write(c.name, c.content)
		if c.name == "unknown.jsonl" {
			c.want = "unknown.jsonl:2:"
		}
		_, err := ReadTraces(write("ok.jsonl", good), p)
		if err == nil || !errors.Is(err, ErrBadTrace) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := ReadTraces(); err == nil {
		t.Error("no files: no error")
	}
	if _, err := ReadTraces(filepath.Join(dir, "missing.jsonl")); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}
