package report

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
)

const eps = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= eps*math.Max(1, math.Abs(b)) }

func TestPercentileNearestRank(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		return xs
	}
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 99, 0},
		{"one p50", []float64{3}, 50, 3},
		{"one p99", []float64{3}, 99, 3},
		{"three p50", []float64{1, 2, 3}, 50, 2},
		{"four p50", []float64{1, 2, 3, 4}, 50, 2},
		{"ten p50", seq(10), 50, 5},
		{"ten p99", seq(10), 99, 10},
		{"hundred p99", seq(100), 99, 99},
		{"hundred p100", seq(100), 100, 100},
		{"thousand p99", seq(1000), 99, 990},
		{"p0 clamps to first", seq(10), 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.xs, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
			}
		})
	}
}

func TestMean(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{2}, 2},
		{[]float64{1, 2, 6}, 3},
		{[]float64{0.5, 1, 2}, 3.5 / 3},
	}
	for _, tc := range tests {
		if got := mean(tc.xs); !near(got, tc.want) {
			t.Errorf("mean(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// event is one hand-made collector event for table-driven scenarios.
type event func(c *Collector)

func arrive(call, prog string, t float64) event {
	return func(c *Collector) { c.CallArrived(call, prog, t) }
}
func first(call string, t float64) event { return func(c *Collector) { c.FirstToken(call, t) } }
func tok(call string, ts ...float64) event {
	return func(c *Collector) {
		for _, t := range ts {
			c.TokenGenerated(call, t)
		}
	}
}
func finish(call string, t float64, n int) event {
	return func(c *Collector) { c.CallFinished(call, t, n) }
}
func progArrive(p string, t float64) event { return func(c *Collector) { c.ProgramArrived(p, t) } }
func progFinish(p string, t, cp float64, n int) event {
	return func(c *Collector) { c.ProgramFinished(p, t, cp, n) }
}
func iter(t, d float64, used, total int) event {
	return func(c *Collector) { c.Iteration(t, d, used, total) }
}

func collect(events ...event) Run {
	c := NewCollector()
	for _, e := range events {
		e(c)
	}
	return c.Summarize("p", 1)
}

// scenario: three calls finish, one does not.
//
//	a: arrive 0, tokens at 1,2,3, finish 3 (3 tokens): e2e 3, ttft 1, tpot 1
//	b: arrive 1, first 1.5, finish 2 (1 token): e2e 1, ttft .5, no tpot
//	c: arrive 2, first 4, finish 8 (5 tokens): e2e 6, ttft 2, tpot 1
//	d: arrive 5, first 6, never finishes
var scenario = []event{
	arrive("a", "P", 0), tok("a", 1, 2, 3),
	arrive("b", "P", 1), first("b", 1.5), tok("b", 1.5), finish("b", 2, 1),
	arrive("c", "Q", 2), first("c", 4), finish("a", 3, 3),
	finish("c", 8, 5),
	arrive("d", "R", 5), first("d", 6),
}

func TestCollectorCallMetrics(t *testing.T) {
	r := collect(scenario...)
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"requests", float64(r.Requests), 4},
		{"completed", float64(r.Completed), 3},
		{"e2e mean", r.E2EMeanS, 10.0 / 3},
		{"e2e p50", r.E2EP50S, 3},
		{"e2e p95", r.E2EP95S, 6},
		{"e2e p99", r.E2EP99S, 6},
		{"ttft mean", r.TTFTMeanS, 3.5 / 3},
		{"ttft p50", r.TTFTP50S, 1},
		{"ttft p95", r.TTFTP95S, 2},
		{"ttft p99", r.TTFTP99S, 2},
		{"tpot mean", r.TPOTMeanS, 1},
		{"tpot p99", r.TPOTP99S, 1},
		{"throughput", r.ThroughputRPS, 3.0 / 8},
		{"tokens", float64(r.TokensGenerated), 4},
		{"virtual", r.VirtualS, 8},
		{"programs", float64(r.Programs), 3},
		{"programs completed", float64(r.ProgramsCompleted), 0},
		{"orphans", float64(r.OrphanEvents), 0},
	}
	for _, tc := range tests {
		if !near(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// p95 by nearest rank sits between p50 and p99 once there are enough calls:
// of 20 calls with e2e 1..20 s and TTFT a tenth of that, p50 is the 10th, p95
// the 19th (⌈0.95·20⌉) and p99 the 20th.
func TestCollectorP95(t *testing.T) {
	var events []event
	for i := 1; i <= 20; i++ {
		name := fmt.Sprintf("c%d", i)
		events = append(events, arrive(name, "P", 0), first(name, float64(i)/10), finish(name, float64(i), 1))
	}
	r := collect(events...)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"e2e p50", r.E2EP50S, 10}, {"e2e p95", r.E2EP95S, 19}, {"e2e p99", r.E2EP99S, 20},
		{"ttft p50", r.TTFTP50S, 1}, {"ttft p95", r.TTFTP95S, 1.9}, {"ttft p99", r.TTFTP99S, 2},
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// A run cut short by Stop counts its unfinished calls at their time so far:
// d (arrived 5, first token 6) and e (arrived 9, no token) at the stop at 10.
func TestStoppedRunCensorsUnfinishedCalls(t *testing.T) {
	events := append(slices.Clone(scenario), arrive("e", "S", 9), func(c *Collector) { c.Stop(10) })
	r := collect(events...)
	if !r.Stopped() || r.StoppedAtS != 10 {
		t.Fatalf("stopped at %v, want 10", r.StoppedAtS)
	}
	// e2e: 3, 1, 6 finished; d 10-5, e 10-9.
	if want := (3.0 + 1 + 6 + 5 + 1) / 5; !near(r.E2EMeanS, want) || r.E2EP99S != 6 {
		t.Errorf("e2e mean %v p99 %v, want %v and 6", r.E2EMeanS, r.E2EP99S, want)
	}
	// ttft: 1, .5, 2 finished; d 6-5 (its first token), e 10-9 (none yet).
	if want := (1 + .5 + 2 + 1 + 1) / 5; !near(r.TTFTMeanS, want) {
		t.Errorf("ttft mean %v, want %v", r.TTFTMeanS, want)
	}
	if r.Completed != 3 || r.Requests != 5 {
		t.Errorf("completed %d of %d, want 3 of 5", r.Completed, r.Requests)
	}
	// Without Stop the same events report only the finished calls.
	if r := collect(events[:len(events)-1]...); r.Stopped() || !near(r.E2EMeanS, 10.0/3) {
		t.Errorf("unstopped: stopped=%v e2e mean %v, want false and 10/3", r.Stopped(), r.E2EMeanS)
	}
}

func TestTPOT(t *testing.T) {
	tests := []struct {
		name   string
		events []event
		want   float64
	}{
		{"from FirstToken and generated", []event{arrive("x", "", 0), first("x", 2), finish("x", 10, 5)}, 2},
		{"first token from TokenGenerated, count from events", []event{arrive("x", "", 0), tok("x", 1, 2, 3, 4, 5), finish("x", 5, 0)}, 1},
		{"one token skipped", []event{arrive("x", "", 0), first("x", 1), finish("x", 1, 1)}, 0},
		{"mean over calls", []event{
			arrive("x", "", 0), first("x", 1), finish("x", 3, 3), // 1
			arrive("y", "", 0), first("y", 1), finish("y", 7, 3), // 3
		}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := collect(tc.events...).TPOTMeanS; !near(got, tc.want) {
				t.Errorf("TPOT mean = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestProgramTokenLatency(t *testing.T) {
	tests := []struct {
		name      string
		events    []event
		mean, p99 float64
		completed int
	}{
		{"critical path over total tokens", []event{
			progArrive("P", 0), progFinish("P", 20, 10, 100), // 0.1 (critical path, not finish−arrival)
		}, 0.1, 0.1, 1},
		{"mean over programs", []event{
			progFinish("P", 20, 10, 100), // 0.1
			progFinish("Q", 20, 6, 20),   // 0.3
		}, 0.2, 0.3, 2},
		{"no critical path: finish - arrival", []event{
			progArrive("P", 2), progFinish("P", 12, 0, 40), // 10/40
		}, 0.25, 0.25, 1},
		{"program arrival defaults to first call", []event{
			arrive("c1", "P", 4), finish("c1", 6, 10), progFinish("P", 14, 0, 20), // 10/20
		}, 0.5, 0.5, 1},
		{"no totalTokens: sum of its calls", []event{
			arrive("c1", "P", 0), finish("c1", 5, 10),
			arrive("c2", "P", 0), finish("c2", 6, 30),
			progFinish("P", 6, 8, 0), // 8/40
		}, 0.2, 0.2, 1},
		{"unfinished excluded", []event{
			progFinish("P", 20, 10, 100), progArrive("Q", 0),
		}, 0.1, 0.1, 1},
		{"zero tokens excluded from mean", []event{
			progFinish("P", 20, 10, 100), progFinish("Q", 5, 5, 0),
		}, 0.1, 0.1, 2},
		{"none", nil, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := collect(tc.events...)
			if !near(r.ProgramTokenLatencyS, tc.mean) || !near(r.ProgramTokenLatencyP99S, tc.p99) {
				t.Errorf("program token latency mean %v p99 %v, want %v %v",
					r.ProgramTokenLatencyS, r.ProgramTokenLatencyP99S, tc.mean, tc.p99)
			}
			if r.ProgramsCompleted != tc.completed {
				t.Errorf("programs completed = %d, want %d", r.ProgramsCompleted, tc.completed)
			}
		})
	}
}

func TestKVUtilTimeWeighted(t *testing.T) {
	tests := []struct {
		name      string
		events    []event
		mean, max float64
		iters     int
	}{
		{"none", nil, 0, 0, 0},
		{"weighted by duration", []event{iter(0, 1, 50, 100), iter(1, 3, 100, 100)}, (0.5*1 + 1*3) / 4.0, 1, 2},
		{"zero-duration iterations: plain mean", []event{iter(0, 0, 20, 100), iter(0, 0, 60, 100)}, 0.4, 0.6, 2},
		{"zero total ignored for util", []event{iter(0, 2, 5, 0), iter(2, 2, 25, 100)}, 0.25, 0.25, 2},
		{"zero-duration iteration ignored when others have duration", []event{iter(0, 2, 10, 100), iter(2, 0, 90, 100)}, 0.1, 0.9, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := collect(tc.events...)
			if !near(r.KVUtilMean, tc.mean) || !near(r.KVUtilMax, tc.max) || r.Iterations != tc.iters {
				t.Errorf("kv mean %v max %v iters %d, want %v %v %d", r.KVUtilMean, r.KVUtilMax, r.Iterations, tc.mean, tc.max, tc.iters)
			}
		})
	}
}

func TestCountersAndHandling(t *testing.T) {
	c := NewCollector()
	c.AddSwap(100, 40)
	c.AddSwap(1, 2)
	c.AddRecompute(7, 4, 3, 0)
	c.AddRecompute(3, 1, 0, 2)
	c.AddPreemption()
	c.AddPreemption()
	c.AddHandling("swap")
	c.AddHandling("preserve")
	c.AddHandling("swap")
	c.SetLeakedBlocks(3)
	c.TokenGenerated("nobody", 1)
	c.CallFinished("nobody", 1, 1)
	r := c.Summarize("fcfs", 2.5)
	want := Run{
		Policy: "fcfs", Rate: 2.5, SwapOutBytes: 101, SwapInBytes: 42, RecomputeTokens: 10,
		Preemptions: 2, LeakedBlocks: 3, OrphanEvents: 2, // orphans do not move VirtualS
		Handling:    map[string]int{"swap": 2, "preserve": 1},
		RecomputeBy: map[string]int64{"tool": 5, "preempted": 3, "host": 2},
	}
	r.WallS = 0
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v\nwant %+v", r, want)
	}
}

func TestZeroCallsNoNaN(t *testing.T) {
	c := NewCollector()
	// Degenerate inputs on top of nothing: must still give finite numbers.
	c.Iteration(0, 0, 0, 0)
	c.ProgramFinished("P", math.NaN(), math.NaN(), 0)
	r := c.Summarize("x", math.NaN())
	v := reflect.ValueOf(r)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Float64 {
			if x := f.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
				t.Errorf("%s = %v", v.Type().Field(i).Name, x)
			}
		}
	}
	if r.Completed != 0 || r.Requests != 0 {
		t.Errorf("completed %d requests %d, want 0 0", r.Completed, r.Requests)
	}
	if _, err := json.Marshal(Report{Runs: []Run{r}}); err != nil {
		t.Fatalf("marshal: %v", err)
	}
}

func TestSummarizeRepeatable(t *testing.T) {
	c := NewCollector()
	for _, e := range scenario {
		e(c)
	}
	a, b := c.Summarize("p", 1), c.Summarize("p", 1)
	a.WallS, b.WallS = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("Summarize changed the collector:\n%+v\n%+v", a, b)
	}
}

func TestTokenGeneratedNoAlloc(t *testing.T) {
	c := NewCollector()
	c.CallArrived("prog-1/call-1", "prog-1", 0)
	ts := 0.0
	allocs := testing.AllocsPerRun(1000, func() {
		ts += 0.01
		c.TokenGenerated("prog-1/call-1", ts)
	})
	if allocs != 0 {
		t.Errorf("TokenGenerated allocates %v times per call", allocs)
	}
}

func BenchmarkTokenGenerated(b *testing.B) {
	c := NewCollector()
	names := make([]string, 256)
	for i := range names {
		names[i] = fmt.Sprintf("program-%d/call-%d", i/4, i)
		c.CallArrived(names[i], fmt.Sprintf("program-%d", i/4), 0)
	}
	b.ReportAllocs()
	t := 0.0
	for i := 0; b.Loop(); i++ {
		t += 1e-3
		c.TokenGenerated(names[i&255], t)
	}
}
