package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func collectSLO(ttft, tpot float64, events ...event) Run {
	c := NewCollector()
	c.SetSLO(ttft, tpot)
	for _, e := range events {
		e(c)
	}
	return c.Summarize("p", 1)
}

func pause(call string, t float64) event  { return func(c *Collector) { c.CallPaused(call, t) } }
func resume(call string, t float64) event { return func(c *Collector) { c.CallResumed(call, t) } }

// TestSLOAttainment: the fraction of arrived calls meeting TTFT ≤ T1 and
// TPOT ≤ T2, and each alone, with the edge rules of the package doc.
func TestSLOAttainment(t *testing.T) {
	tests := []struct {
		name             string
		ttft, tpot       float64
		events           []event
		both, okT, okP   float64
		wantSLOT, wantSP float64
	}{
		{
			name: "exactly at both thresholds meets them", ttft: 0.4, tpot: 0.15,
			// TTFT 1.4−1.0 = 0.3999…96 or 0.4000…04 in floats; TPOT (1.7−1.4)/2.
			events: []event{arrive("a", "", 1.0), first("a", 1.4), finish("a", 1.7, 3)},
			both:   1, okT: 1, okP: 1, wantSLOT: 0.4, wantSP: 0.15,
		},
		{
			name: "just over each threshold misses", ttft: 0.4, tpot: 0.15,
			events: []event{
				arrive("a", "", 0), first("a", 0.4001), finish("a", 0.7001, 3), // TTFT over, TPOT 0.15
				arrive("b", "", 0), first("b", 0.4), finish("b", 0.7001, 3), // TTFT at, TPOT 0.15005
			},
			both: 0, okT: 0.5, okP: 0.5, wantSLOT: 0.4, wantSP: 0.15,
		},
		{
			name: "one output token: no TPOT, judged by TTFT alone", ttft: 0.4, tpot: 0.15,
			events: []event{
				arrive("a", "", 0), first("a", 0.3), finish("a", 5, 1), // TTFT ok; a long finish does not matter
				arrive("b", "", 0), first("b", 0.5), finish("b", 0.5, 1), // TTFT miss
			},
			both: 0.5, okT: 0.5, okP: 1, wantSLOT: 0.4, wantSP: 0.15,
		},
		{
			name: "unfinished calls count as misses", ttft: 1, tpot: 1,
			events: []event{
				arrive("a", "", 0), first("a", 0.1), finish("a", 0.2, 2),
				arrive("b", "", 0), first("b", 0.1), // never finishes
				arrive("c", "", 0), arrive("d", "", 0), // never start
			},
			both: 0.25, okT: 0.25, okP: 0.25, wantSLOT: 1, wantSP: 1,
		},
		{
			name: "tool pauses are left out of TPOT", ttft: 1, tpot: 0.1,
			// 5 tokens over 0..10.4 with 10 s at a tool: (10.4−0−10)/4 = 0.1.
			events: []event{arrive("a", "", 0), first("a", 0), pause("a", 0.2), resume("a", 10.2), finish("a", 10.4, 5)},
			both:   1, okT: 1, okP: 1, wantSLOT: 1, wantSP: 0.1,
		},
		{
			name: "no token reported: TTFT at the finish", ttft: 1, tpot: 1,
			events: []event{arrive("a", "", 0), finish("a", 1.5, 1)},
			both:   0, okT: 0, okP: 1, wantSLOT: 1, wantSP: 1,
		},
		{
			name: "no SLO: nothing measured", ttft: 0, tpot: 0.15,
			events: []event{arrive("a", "", 0), first("a", 0.1), finish("a", 0.2, 2)},
		},
		{
			name: "no calls: zero, not NaN", ttft: 1, tpot: 1,
			wantSLOT: 1, wantSP: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := collectSLO(tc.ttft, tc.tpot, tc.events...)
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"attainment", r.SLOAttainment, tc.both},
				{"TTFT attainment", r.SLOTTFTAttainment, tc.okT},
				{"TPOT attainment", r.SLOTPOTAttainment, tc.okP},
				{"TTFT SLO", r.SLOTTFTS, tc.wantSLOT},
				{"TPOT SLO", r.SLOTPOTS, tc.wantSP},
			} {
				if !near(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

func TestMeetsSLO(t *testing.T) {
	for _, tc := range []struct {
		v, slo float64
		want   bool
	}{
		{0.4, 0.4, true},
		{1.4 - 1.0, 0.4, true},
		{0.4 + 5e-10, 0.4, true}, // within the clock's nanosecond
		{0.4 + 2e-9, 0.4, false},
		{0, 0.4, true},
	} {
		if got := MeetsSLO(tc.v, tc.slo); got != tc.want {
			t.Errorf("MeetsSLO(%v, %v) = %v, want %v", tc.v, tc.slo, got, tc.want)
		}
	}
}

func sloReport() *Report {
	rep := sampleReport()
	for i := range rep.Runs {
		r := &rep.Runs[i]
		r.SLOTTFTS, r.SLOTPOTS = 0.4, 0.15
		r.SLOAttainment, r.SLOTTFTAttainment, r.SLOTPOTAttainment = 0.5+0.1*float64(i%3), 0.9, 0.8
	}
	return rep
}

func TestSLOInTableJSONCSV(t *testing.T) {
	rep := sloReport()
	var buf bytes.Buffer
	WriteTable(&buf, rep)
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 3+6 {
		t.Fatalf("%d lines, want 9:\n%s", len(lines), buf.String())
	}
	if !strings.Contains(lines[1], "T_TTFT=0.4 s, T_TPOT=0.15 s") {
		t.Errorf("SLO line %q", lines[1])
	}
	if !strings.Contains(lines[2], "slo_att") {
		t.Errorf("header lacks slo_att: %q", lines[2])
	}
	if !strings.HasSuffix(lines[3], "50.0/90.0/80.0") {
		t.Errorf("row %q lacks the attainment both/ttft/tpot", lines[3])
	}
	for _, l := range lines[3:] {
		if len(l) != len(lines[2]) {
			t.Errorf("row width %d != header width %d", len(l), len(lines[2]))
		}
	}

	dir := t.TempDir()
	if err := WriteJSON(filepath.Join(dir, "r.json"), rep); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	var got struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]float64{"slo_ttft_s": 0.4, "slo_tpot_s": 0.15, "slo_attainment": 0.5, "slo_ttft_attainment": 0.9, "slo_tpot_attainment": 0.8} {
		if got.Runs[0][k] != v {
			t.Errorf("JSON %s = %v, want %v", k, got.Runs[0][k], v)
		}
	}

	if err := WriteCSV(filepath.Join(dir, "r.csv"), rep); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Join(dir, "r.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(rows[0], "slo_attainment")
	if i < 0 || rows[1][i] != "0.5" {
		t.Errorf("CSV slo_attainment column %d, row %v", i, rows[1])
	}
}

// TestSLOTableWithoutSLO: a run without SLOs shows "-" beside runs with.
func TestSLOTableMixed(t *testing.T) {
	rep := sloReport()
	rep.Runs[1].SLOTTFTS, rep.Runs[1].SLOTPOTS = 0, 0
	var buf bytes.Buffer
	WriteTable(&buf, rep)
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if !strings.HasSuffix(lines[4], " -") {
		t.Errorf("row without SLO %q", lines[4])
	}
}

func TestPlotSLOAttainment(t *testing.T) {
	dir := t.TempDir()
	paths, err := Plot(dir, sloReport())
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "infercept-multi-slo_attainment.png")
	if len(paths) != 6 || paths[5] != want {
		t.Fatalf("paths %v, want the attainment plot %s last", paths, want)
	}
	if st, err := os.Stat(want); err != nil || st.Size() == 0 {
		t.Errorf("attainment plot: %v", err)
	}
}
