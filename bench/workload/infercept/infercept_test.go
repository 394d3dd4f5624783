package infercept

import "testing"

func TestFamilyAndTool(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := func(v string) *string { return &v }
	tests := []struct {
		key  string
		fam  Family
		seg  Segment
		tool string
	}{
		{"0a84bcdff8434b23971032489f44b90a", FamilyHex, Segment{APITime: f(8e-5)}, ToolMath},
		{"0a84bcdff8434b23971032489f44b90a", FamilyHex, Segment{APITime: f(0)}, ToolMath},
		{"0a84bcdff8434b23971032489f44b90a", FamilyHex, Segment{APITime: f(0.6)}, ToolQA},
		{"12_1", FamilyConvAPI, Segment{APITime: f(5), APIToken: s("Convert this to text to speech. ")}, ToolTTS},
		{"12_3", FamilyConvAPI, Segment{APITime: f(5), APIToken: s("Generate an image about this. ")}, ToolImage},
		{"12_3", FamilyConvAPI, Segment{APITime: f(40), APIToken: s("and then?")}, ToolHuman},
		{"12_2", FamilyConvAPI, Segment{APITime: f(0.1)}, ToolVirtualEnv},
		{"12", FamilyConv, Segment{APITime: f(12), Prompt: s("x")}, ToolHuman},
		{"12", FamilyConv, Segment{APITime: f(0.1)}, ToolVirtualEnv},
		{"agent-7", FamilyOther, Segment{APITime: f(1)}, ToolGeneric},
		{"agent-7", FamilyOther, Segment{APITime: f(1), Tool: "search"}, "search"},
		{"0A84BCDFF8434B23971032489F44B90A", FamilyOther, Segment{}, ToolGeneric},
		{"1_", FamilyOther, Segment{}, ToolGeneric},
	}
	for _, tc := range tests {
		if got := FamilyOf(tc.key); got != tc.fam {
			t.Errorf("FamilyOf(%q) = %d, want %d", tc.key, got, tc.fam)
		}
		if got := ToolName(tc.key, &tc.seg); got != tc.tool {
			t.Errorf("ToolName(%q, %+v) = %q, want %q", tc.key, tc.seg, got, tc.tool)
		}
	}
}

func TestParseKeepsOrder(t *testing.T) {
	reqs, err := Parse([]byte(`{"z": [{"completion_tokens": 1}], "a": [{"completion_tokens": 2}], "m": [{"completion_tokens": 3, "tool": "x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 || reqs[0].Key != "z" || reqs[1].Key != "a" || reqs[2].Key != "m" || *reqs[2].Segments[0].CompletionTokens != 3 || reqs[2].Segments[0].Tool != "x" {
		t.Fatalf("%+v", reqs)
	}
}
