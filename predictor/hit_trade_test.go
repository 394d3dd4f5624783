package predictor

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bimodalDist is a tool call of 10-19 tokens with probability call, or a
// reply spread evenly over 40-149 tokens.
func bimodalDist(call float32) []float32 {
	d := make([]float32, NumClasses)
	d[1] = call
	for b := 4; b < 15; b++ {
		d[b] = (1 - call) / 11
	}
	return d
}

func TestHitCandidateMovesToADenseWindowOnlyWhereItPays(t *testing.T) {
	d := bimodalDist(0.45)
	median := LengthQuantile(d, 0.5, DefaultOverflowTokens)
	if median < 40 {
		t.Fatalf("test distribution: median %d, want it in the replies", median)
	}
	if c := hitCandidate(d, median, DefaultOverflowTokens); c < 10 || c > 19 {
		t.Fatalf("45%% on a 10-token call and the rest spread over 110 tokens: candidate %d, want the call's window (median %d)", c, median)
	}

	// Nearly flat over 0-399 tokens: the densest window adds almost no
	// chance of a hit and moves the point 200 tokens from the median.
	flat := make([]float32, NumClasses)
	for b := range 40 {
		flat[b] = 0.025
	}
	flat[0], flat[39] = 0.024, 0.026
	fm := LengthQuantile(flat, 0.5, DefaultOverflowTokens)
	if c := hitCandidate(flat, fm, DefaultOverflowTokens); c != fm {
		t.Fatalf("flat distribution: candidate %d, want the median %d", c, fm)
	}

	over := make([]float32, NumClasses)
	over[1], over[OverflowBin] = 0.3, 0.7
	if c := hitCandidate(over, DefaultOverflowTokens, DefaultOverflowTokens); c != DefaultOverflowTokens {
		t.Fatalf("median in the overflow bin: candidate %d, want it kept", c)
	}
	if c := hitCandidate(nil, 33, DefaultOverflowTokens); c != 33 {
		t.Fatalf("no distribution: candidate %d, want the point 33", c)
	}
}

func TestHitTradeServesTheCandidateOnlyOnceItHasPaid(t *testing.T) {
	var paid HitTrade
	for i := range hitTradeMinSegments {
		if got := paid.Point(60, 14); got != 60 {
			t.Fatalf("after %d moves: point %d, want the median 60 until %d moves are scored", i, got, hitTradeMinSegments)
		}
		paid.Observe(60, 14, 13+i%3) // the candidate hits, the median misses by about 46
		paid.Observe(60, 60, 200)    // no move: not booked
	}
	if got := paid.Point(60, 14); got != 14 {
		t.Fatalf("after %d moves that each bought a hit and cut the error: point %d, want the candidate 14", hitTradeMinSegments, got)
	}

	// Each move buys a hit one time in four at 60 more tokens of error the
	// other three: 0.25 hits per 45 tokens, under hitTradeRate.
	var unpaid HitTrade
	for i := range 4 * hitTradeMinSegments {
		actual := 120
		if i%4 == 0 {
			actual = 14
		}
		unpaid.Observe(60, 14, actual)
	}
	if unpaid.On() {
		t.Fatalf("moves that bought %.0f hits for %.0f tokens of error are served", unpaid.hits, unpaid.absErr)
	}
}

// A deployment whose segments are the tool call the mixture's distribution
// gives 45% moves its point from the median to the call once the moves
// have paid; one whose segments are the replies never does.
func TestServedStepTradesOnlyWhereTheDeploymentPays(t *testing.T) {
	d := bimodalDist(0.45)
	median := LengthQuantile(d, 0.5, DefaultOverflowTokens)
	in := Input{LastTool: "search", History: History{Calls: 1, LastOutputTokens: 30}}
	run := func(actual func(i int) int) (first, last ServedPoint) {
		step := ServedStep{Led: NewModeLed(-1)}
		for i := range 3 * hitTradeMinSegments {
			p := step.Predict(ProgramBlend{}, in, median, d, DefaultOverflowTokens)
			if i == 0 {
				first = p
			}
			last = p
			step.Observe(ProgramBlend{}, in, p, actual(i), "")
		}
		return first, last
	}
	first, last := run(func(i int) int { return 13 + i%4 })
	if first.Point != median || first.Candidate == median {
		t.Fatalf("fresh deployment: point %d, candidate %d; want the median %d served and a candidate apart from it", first.Point, first.Candidate, median)
	}
	if last.Traded != last.Candidate || last.Traded > 19 {
		t.Fatalf("after %d calls of 13-16 tokens: the mixture serves %d (candidate %d), want the call's window", 3*hitTradeMinSegments, last.Traded, last.Candidate)
	}
	_, last = run(func(i int) int { return 60 + 7*(i%12) })
	if last.Traded != median {
		t.Fatalf("after replies of 60-137 tokens: the mixture serves %d, want the median %d", last.Traded, median)
	}
}

// The trade's sums are kept with the window modes across a restart; a file
// written before them restores as a trade that has not paid; impossible
// sums are refused.
func TestHitTradeStatePersists(t *testing.T) {
	dir := t.TempDir()
	m := NewModeLed(40)
	for i := range 2 * hitTradeMinSegments {
		m.trade.Observe(60, 14, 13+i%3)
	}
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	again := NewModeLed(40)
	if found, err := again.Restore(dir); !found || err != nil {
		t.Fatalf("restore: found %v, %v", found, err)
	}
	if again.trade != m.trade || !again.trade.On() {
		t.Fatalf("restored trade %+v, saved %+v", again.trade, m.trade)
	}
	path := filepath.Join(dir, ModeLedStateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), `,"hit_trade"`)
	if i < 0 {
		t.Fatalf("no hit_trade in %s", data)
	}
	old := string(data[:i]) + "}"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	before := NewModeLed(40)
	if _, err := before.Restore(dir); err != nil || before.trade.On() || before.trade.moves != 0 {
		t.Fatalf("a file from before the trade: %v, trade %+v; want restored, not paid", err, before.trade)
	}
	bad := strings.Replace(string(data), `"moves":`, `"moves":-`, 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewModeLed(40).Restore(dir); err == nil {
		t.Fatal("restored negative moves")
	}
}

// expectedAbsError's closed form per bin equals the sum over the tokens.
func TestExpectedAbsErrorIsTheSumOverTokens(t *testing.T) {
	d := bimodalDist(0.3)
	d[OverflowBin], d[2] = 0.05, d[2]+0.02
	for _, x := range []int{0, 7, 14, 19, 20, 95, 499, 800} {
		want := float64(d[OverflowBin]) * float64(abs(DefaultOverflowTokens-x))
		for y := range NumBins * BinWidth {
			want += float64(d[y/BinWidth]) / BinWidth * float64(abs(y-x))
		}
		if got := expectedAbsError(d, x, DefaultOverflowTokens); math.Abs(got-want) > 1e-9 {
			t.Errorf("E|X-%d| = %v, the sum over tokens %v", x, got, want)
		}
	}
}
