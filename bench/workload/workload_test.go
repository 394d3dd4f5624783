package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	want := []string{"azure-code", "azure-conv", "chat", "coding", "fanout", "infercept-multi", "infercept-single", "mcts", "mixed", "mooncake-conv", "react"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
}

func TestLoadUnknown(t *testing.T) {
	_, err := Load("no-such-workload", 1)
	if err == nil {
		t.Fatal("Load of an unknown name: no error")
	}
	for _, s := range append([]string{"no-such-workload"}, Names()...) {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
}

// TestLoadEvery loads and validates every workload and checks the shape DESIGN.md §7 gives it.
func TestLoadEvery(t *testing.T) {
	tests := []struct {
		name        string
		programs    int // 0: not checked
		timestamped bool
		toolCalls   bool // in-call tool calls
		pauses      bool // ThinkTime between calls
		multiCall   bool // programs with several calls
	}{
		{name: "infercept-multi", programs: 397, toolCalls: true},
		{name: "infercept-single", programs: 397, toolCalls: true},
		{name: "chat", programs: ChatPrograms, pauses: true, multiCall: true},
		{name: "react", programs: ReactPrograms, pauses: true, multiCall: true},
		{name: "mcts", programs: MCTSPrograms, pauses: true, multiCall: true},
		{name: "mixed", programs: 3 * MixedPerKind, pauses: true, multiCall: true},
		{name: "coding", programs: DefaultCodingOptions().Programs, toolCalls: true},
		{name: "fanout", programs: DefaultFanoutOptions().Programs, toolCalls: true, multiCall: true},
		{name: "mooncake-conv", programs: 12031, timestamped: true},
		{name: "azure-conv", programs: 19366, timestamped: true},
		{name: "azure-code", programs: 8819, timestamped: true},
	}
	if len(tests) != len(Names()) {
		t.Fatalf("the table covers %d workloads, Names() has %d", len(tests), len(Names()))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Load(tc.name, 7)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Validate(); err != nil {
				t.Fatal(err)
			}
			if w.Name != tc.name || w.Description == "" {
				t.Errorf("name %q description %q", w.Name, w.Description)
			}
			s := Stats(w)
			t.Log(s)
			if s.Programs != tc.programs {
				t.Errorf("programs = %d, want %d", s.Programs, tc.programs)
			}
			if w.Timestamped != tc.timestamped {
				t.Errorf("Timestamped = %v", w.Timestamped)
			}
			if (s.ToolCalls > 0) != tc.toolCalls || (s.Pauses > 0) != tc.pauses || (s.MaxCallsPerProgram > 1) != tc.multiCall {
				t.Errorf("tool calls %d, pauses %d, max calls %d: want tools %v pauses %v multi-call %v",
					s.ToolCalls, s.Pauses, s.MaxCallsPerProgram, tc.toolCalls, tc.pauses, tc.multiCall)
			}
			if s.MeanPrompt <= 0 || s.MeanDecode <= 0 {
				t.Errorf("mean prompt %g, decode %g", s.MeanPrompt, s.MeanDecode)
			}
			if tc.timestamped && (w.Programs[0].Arrival != 0 || s.Span < 3000 || s.Span > 3700) {
				t.Errorf("first arrival %g, span %g s: want 0 and about an hour", w.Programs[0].Arrival, s.Span)
			}
		})
	}
}

func TestInferceptMulti(t *testing.T) {
	tests := []struct {
		name                         string
		opt                          InferceptOptions
		segments, toolCalls, zeroEnd int
	}{
		// 2,054 segments in the trace, 1,841 of them with an api_time; 184 of those are on a
		// request's last segment.
		{"default drops trailing tools", InferceptOptions{}, 2054, 1841 - 184, 0},
		{"keep trailing tools", InferceptOptions{KeepTrailingTools: true}, 2054 + 184, 1841, 184},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := LoadInfercept(true, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			s := Stats(w)
			if s.Programs != 397 || s.Calls != 397 || s.Segments != tc.segments || s.ToolCalls != tc.toolCalls {
				t.Errorf("programs %d calls %d segments %d tool calls %d; want 397 397 %d %d", s.Programs, s.Calls, s.Segments, s.ToolCalls, tc.segments, tc.toolCalls)
			}
			zeroEnd := 0
			for _, p := range w.Programs {
				c := p.Calls[0]
				if len(c.Segments) > 1 && c.Segments[len(c.Segments)-1].Decode == 0 {
					zeroEnd++
				}
			}
			if zeroEnd != tc.zeroEnd {
				t.Errorf("%d calls end with a 0-token segment, want %d", zeroEnd, tc.zeroEnd)
			}
			want := map[string]int{"human-think": 545, "image-gen": 225, "math": 283, "qa": 144, "tts": 225, "virtual-env": 235}
			if tc.opt.KeepTrailingTools {
				want = nil // counted by the total only
			}
			for _, ts := range s.Tools {
				if want != nil && ts.InCall != want[ts.Name] {
					t.Errorf("tool %s: %d calls, want %d", ts.Name, ts.InCall, want[ts.Name])
				}
			}
			if len(w.Notes) == 0 {
				t.Error("no notes: the trailing tools, negative returns and broken invariants should be noted")
			}
		})
	}
}

func TestInferceptSingle(t *testing.T) {
	w, err := InferceptSingle()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range w.Programs {
		c := p.Calls[0]
		if len(c.Segments) != 2 || c.Segments[0].Tool == "" || c.Segments[1].Tool != "" {
			t.Fatalf("program %s: want 2 segments with one tool call, got %+v", p.ID, c.Segments)
		}
	}
	if s := Stats(w); s.Segments != 794 || s.ToolCalls != 397 {
		t.Errorf("segments %d tool calls %d, want 794 397", s.Segments, s.ToolCalls)
	}
}

// TestInferceptAgainstRaw checks the embedded counts against the embedded original: same
// requests in the same order, counts copied where the original has counts, and text segments
// tokenized to plausible lengths.
func TestInferceptAgainstRaw(t *testing.T) {
	for _, multi := range []bool{true, false} {
		raw, err := InferceptRaw(multi)
		if err != nil {
			t.Fatal(err)
		}
		var orig map[string][]map[string]any
		if err := json.Unmarshal(raw, &orig); err != nil {
			t.Fatal(err)
		}
		w, err := LoadInfercept(multi, InferceptOptions{KeepTrailingTools: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(orig) != len(w.Programs) {
			t.Fatalf("multi=%v: %d raw requests, %d programs", multi, len(orig), len(w.Programs))
		}
		texts := 0
		for _, p := range w.Programs {
			segs, ok := orig[p.ID]
			if !ok {
				t.Fatalf("program %s not in the raw trace", p.ID)
			}
			c := p.Calls[0]
			first := segs[0]
			if v, ok := first["prompt_tokens"].(float64); ok && int(v) != c.NewTokens {
				t.Errorf("%s: NewTokens %d, raw prompt_tokens %v", p.ID, c.NewTokens, v)
			}
			if s, ok := first["prompt"].(string); ok {
				texts++
				// GPT-2 BPE on English: roughly 2 to 6 characters per token.
				if n := len(s); c.NewTokens < n/8 || c.NewTokens > n/2+2 {
					t.Errorf("%s: %d prompt tokens for %d characters", p.ID, c.NewTokens, n)
				}
			}
			for i, seg := range segs {
				if v, ok := seg["completion_tokens"].(float64); ok && int(v) != c.Segments[i].Decode {
					t.Errorf("%s segment %d: Decode %d, raw %v", p.ID, i, c.Segments[i].Decode, v)
				}
				if v, ok := seg["api_time"].(float64); ok && v != c.Segments[i].ToolTime {
					t.Errorf("%s segment %d: ToolTime %g, raw %v", p.ID, i, c.Segments[i].ToolTime, v)
				}
			}
		}
		if texts == 0 {
			t.Errorf("multi=%v: no text requests", multi)
		}
	}
}

func TestMooncakeAccounting(t *testing.T) {
	raw, err := readData("mooncake_conversation_trace.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	w, err := MooncakeConv()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<24)
	i := 0
	for ; sc.Scan(); i++ {
		var r struct {
			Timestamp    float64  `json:"timestamp"`
			InputLength  int      `json:"input_length"`
			OutputLength int      `json:"output_length"`
			HashIDs      []uint64 `json:"hash_ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		p := w.Programs[i]
		c := p.Calls[0]
		if got := c.PromptFromPrefix() + c.NewTokens; got != r.InputLength {
			t.Fatalf("record %d: prompt %d, input_length %d", i, got, r.InputLength)
		}
		if c.NewTokens < 0 || c.NewTokens >= MooncakeBlock || !slices.Equal(c.SharedPrefix, r.HashIDs[:len(c.SharedPrefix)]) {
			t.Fatalf("record %d: NewTokens %d, prefix %v of %v", i, c.NewTokens, c.SharedPrefix, r.HashIDs)
		}
		if p.Arrival != r.Timestamp/1000 || c.Segments[0].Decode != r.OutputLength {
			t.Fatalf("record %d: arrival %g decode %d", i, p.Arrival, c.Segments[0].Decode)
		}
	}
	if i != len(w.Programs) {
		t.Fatalf("%d records, %d programs", i, len(w.Programs))
	}
}

func TestAzureFirstRows(t *testing.T) {
	tests := []struct {
		name     string
		first    [2]int // ContextTokens, GeneratedTokens of row 1
		second   float64
		programs int
	}{
		{"azure-conv", [2]int{374, 44}, 50.9951690 - 46.6805900, 19366},
		{"azure-code", [2]int{4808, 10}, 4.0319600 - 3.9799600, 8819},
	}
	for _, tc := range tests {
		w, err := Load(tc.name, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := w.Programs[0].Calls[0]
		if c.NewTokens != tc.first[0] || c.Segments[0].Decode != tc.first[1] {
			t.Errorf("%s row 1: %d/%d", tc.name, c.NewTokens, c.Segments[0].Decode)
		}
		if d := w.Programs[1].Arrival - tc.second; math.Abs(d) > 1e-6 {
			t.Errorf("%s row 2 arrival %g, want %g", tc.name, w.Programs[1].Arrival, tc.second)
		}
	}
}

func TestSyntheticStats(t *testing.T) {
	const tol = 0.05 // relative, for means the generator calibrates directly
	tests := []struct {
		name                      string
		calls, maxCalls           float64
		callsTol                  float64
		newTokens, prompt, decode float64 // 0: not checked
	}{
		{name: "chat", calls: chatCallsMean, maxCalls: chatCallsMax, callsTol: 0.1, newTokens: chatPrefillMean, decode: chatDecodeMean},
		{name: "react", calls: reactCallsMean, maxCalls: reactCallsMax, callsTol: 0.1, prompt: reactPrefillMean, decode: reactDecodeMean},
		{name: "mcts", calls: mctsCallsMean, maxCalls: mctsCallsMax, callsTol: 0.1, prompt: mctsPrefillMean, decode: mctsDecodeMean},
	}
	near := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol*want }
	for _, tc := range tests {
		for _, seed := range []int64{1, 2, 3} {
			w, err := Load(tc.name, seed)
			if err != nil {
				t.Fatal(err)
			}
			s := Stats(w)
			if !near(s.MeanCallsPerProgram, tc.calls, tc.callsTol) || float64(s.MaxCallsPerProgram) > tc.maxCalls {
				t.Errorf("%s seed %d: calls/program mean %.2f max %d, want %.2f (±%.0f%%) max ≤ %g", tc.name, seed, s.MeanCallsPerProgram, s.MaxCallsPerProgram, tc.calls, 100*tc.callsTol, tc.maxCalls)
			}
			if tc.newTokens > 0 && !near(s.MeanNewTokens, tc.newTokens, tol) {
				t.Errorf("%s seed %d: NewTokens mean %.1f, want %g", tc.name, seed, s.MeanNewTokens, tc.newTokens)
			}
			if tc.prompt > 0 && !near(s.MeanPrompt, tc.prompt, tol) {
				t.Errorf("%s seed %d: prompt mean %.1f, want %g", tc.name, seed, s.MeanPrompt, tc.prompt)
			}
			if !near(s.MeanDecode, tc.decode, tol) {
				t.Errorf("%s seed %d: decode mean %.1f, want %g", tc.name, seed, s.MeanDecode, tc.decode)
			}
			// Heavy tail: the largest program has several times the mean number of calls.
			if float64(s.MaxCallsPerProgram) < 2.5*s.MeanCallsPerProgram {
				t.Errorf("%s seed %d: max %d calls vs mean %.2f: no tail", tc.name, seed, s.MaxCallsPerProgram, s.MeanCallsPerProgram)
			}
		}
	}
}

// TestSyntheticShape checks the structure: chat and react are chains that continue their
// parent after a pause; mcts expands several children of one node in parallel.
func TestSyntheticShape(t *testing.T) {
	for _, name := range []string{"chat", "react"} {
		w, err := Load(name, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range w.Programs {
			for i, c := range p.Calls {
				if i == 0 {
					if len(c.Parents) != 0 || c.ContinueParent {
						t.Fatalf("%s %s: first call has parents", name, p.ID)
					}
					continue
				}
				if !c.ContinueParent || !slices.Equal(c.Parents, []string{p.Calls[i-1].ID}) || c.ThinkTime <= 0 && c.ThinkTool == "" {
					t.Fatalf("%s %s call %d: %+v", name, p.ID, i, c)
				}
				if name == "react" && (c.ThinkTool == "" || c.ThinkTool == "human-think") {
					t.Fatalf("react %s call %d: ThinkTool %q", p.ID, i, c.ThinkTool)
				}
			}
		}
	}
	w, err := Load("mcts", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range w.Programs {
		siblings := map[string]map[string]bool{} // first parent → threads of calls expanding it together
		for _, c := range p.Calls {
			if len(c.Parents) > 0 && strings.HasPrefix(c.ID, "x") {
				key := c.Parents[0] + "|" + strings.Split(c.ID, ".")[0]
				if siblings[key] == nil {
					siblings[key] = map[string]bool{}
				}
				siblings[key][c.Thread] = true
			}
		}
		wide := 0
		for _, threads := range siblings {
			if len(threads) == mctsWidth {
				wide++
			}
		}
		if wide == 0 {
			t.Fatalf("mcts %s: no node expanded into %d parallel threads", p.ID, mctsWidth)
		}
	}
	m, err := Load("mixed", 1)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range m.Programs {
		kinds[strings.Split(p.ID, "-")[0]]++
	}
	if !reflect.DeepEqual(kinds, map[string]int{"chat": MixedPerKind, "react": MixedPerKind, "mcts": MixedPerKind}) {
		t.Errorf("mixed kinds %v", kinds)
	}
}

func TestDeterminism(t *testing.T) {
	for _, name := range []string{"chat", "react", "mcts", "mixed"} {
		a, err := Load(name, 42)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Load(name, 42)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two loads with seed 42 differ", name)
		}
		c, err := Load(name, 43)
		if err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(a.Programs, c.Programs) {
			t.Errorf("%s: seeds 42 and 43 give the same programs", name)
		}
	}
}

func TestContexts(t *testing.T) {
	p := Program{ID: "p", Calls: []Call{
		{ID: "a", NewTokens: 10, Segments: []Segment{{Decode: 5, Tool: "t", ToolReturn: 3}, {Decode: 2}}},
		{ID: "b", Parents: []string{"a"}, ContinueParent: true, NewTokens: 4, Segments: []Segment{{Decode: 1}}},
		{ID: "c", Parents: []string{"a"}, SharedPrefix: []uint64{1, 2}, SharedPrefixBlock: 8, NewTokens: 1, Segments: []Segment{{Decode: 1}}},
	}}
	prompt, final := p.Contexts()
	if !slices.Equal(prompt, []int{10, 24, 17}) || !slices.Equal(final, []int{20, 25, 18}) {
		t.Fatalf("prompt %v final %v", prompt, final)
	}
}

func TestValidateRejects(t *testing.T) {
	ok := func() *Workload {
		return &Workload{Name: "w", Programs: []Program{{ID: "p", Calls: []Call{
			{ID: "a", NewTokens: 4, Segments: []Segment{{Decode: 2, Tool: "t", ToolTime: 1, ToolReturn: 3}, {Decode: 1}}},
			{ID: "b", Parents: []string{"a"}, ContinueParent: true, Segments: []Segment{{Decode: 1}}},
		}}}}
	}
	if err := ok().Validate(); err != nil {
		t.Fatalf("valid workload: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(w *Workload)
		want   string
	}{
		{"no programs", func(w *Workload) { w.Programs = nil }, "no programs"},
		{"duplicate program", func(w *Workload) { w.Programs = append(w.Programs, w.Programs[0]) }, "duplicate program id"},
		{"no calls", func(w *Workload) { w.Programs[0].Calls = nil }, "no calls"},
		{"missing parent", func(w *Workload) { w.Programs[0].Calls[1].Parents = []string{"zz"} }, `parent "zz" does not exist`},
		{"later parent", func(w *Workload) {
			c := w.Programs[0].Calls
			c[0], c[1] = c[1], c[0]
		}, "does not exist or does not come earlier"},
		{"self parent", func(w *Workload) { w.Programs[0].Calls[1].Parents = []string{"b"} }, "its own parent"},
		{"duplicate call", func(w *Workload) { w.Programs[0].Calls[1].ID = "a" }, "duplicate call id"},
		{"continue without parent", func(w *Workload) { w.Programs[0].Calls[0].ContinueParent = true }, "ContinueParent without a parent"},
		{"no segments", func(w *Workload) { w.Programs[0].Calls[1].Segments = nil }, "no segments"},
		{"tool on last", func(w *Workload) { w.Programs[0].Calls[1].Segments[0].Tool = "x" }, "last segment must not call a tool"},
		{"return on last", func(w *Workload) { w.Programs[0].Calls[1].Segments[0].ToolReturn = 1 }, "last segment must not call a tool"},
		{"middle without tool", func(w *Workload) { w.Programs[0].Calls[0].Segments[0] = Segment{Decode: 1} }, "only the last segment"},
		{"negative tool time", func(w *Workload) { w.Programs[0].Calls[0].Segments[0].ToolTime = -1 }, "ToolTime"},
		{"NaN tool time", func(w *Workload) { w.Programs[0].Calls[0].Segments[0].ToolTime = math.NaN() }, "ToolTime"},
		{"negative decode", func(w *Workload) { w.Programs[0].Calls[0].Segments[1].Decode = -1 }, "Decode -1"},
		{"negative return", func(w *Workload) { w.Programs[0].Calls[0].Segments[0].ToolReturn = -1 }, "ToolReturn -1"},
		{"negative new tokens", func(w *Workload) { w.Programs[0].Calls[0].NewTokens = -1 }, "NewTokens -1"},
		{"empty prompt", func(w *Workload) { w.Programs[0].Calls[0].NewTokens = 0 }, "empty prompt"},
		{"negative think", func(w *Workload) { w.Programs[0].Calls[1].ThinkTime = -2 }, "ThinkTime"},
		{"prefix without block", func(w *Workload) { w.Programs[0].Calls[0].SharedPrefix = []uint64{1} }, "SharedPrefixBlock"},
		{"huge decode", func(w *Workload) { w.Programs[0].Calls[0].Segments[1].Decode = MaxTokens + 1 }, "Decode"},
		{"arrival backwards", func(w *Workload) {
			w.Timestamped = true
			q := w.Programs[0]
			q.ID, q.Arrival = "q", 1
			w.Programs[0].Arrival = 2
			w.Programs = append(w.Programs, q)
		}, "before the previous"},
		{"infinite arrival", func(w *Workload) { w.Programs[0].Arrival = math.Inf(1) }, "arrival"},
		{"empty program id", func(w *Workload) { w.Programs[0].ID = "" }, "empty program id"},
		{"empty call id", func(w *Workload) { w.Programs[0].Calls[0].ID = "" }, "empty call id"},
		{"repeated parent", func(w *Workload) { w.Programs[0].Calls[1].Parents = []string{"a", "a"} }, "listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := ok()
			tc.mutate(w)
			err := w.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	var nilW *Workload
	if nilW.Validate() == nil {
		t.Error("nil workload validated")
	}
}
