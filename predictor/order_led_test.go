package predictor

import "testing"

// OrderLed keeps the first point until the second has ordered enough pairs
// of finished segments better; a second point that orders worse is never
// chosen, however close it lands.
func TestOrderLedChoosesTheBetterOrder(t *testing.T) {
	lengths := []int{10, 200, 40, 120, 70, 300, 20, 90}
	var better, worse OrderLed
	for i := range 40 {
		actual := lengths[i%len(lengths)]
		// The first point orders by a noisy rank; the second exactly.
		first := 100 + 7*(i%3) - actual/50
		if got := better.Choose(first, actual); i < 8 && got != first {
			t.Fatalf("segment %d: chose %d before %d pairs were scored", i, got, orderLedMinPairs)
		}
		better.Observe(first, actual, actual)
		// Here the first point orders exactly, the second backwards.
		worse.Observe(actual, 1000-actual, actual)
	}
	if got := better.Choose(55, 66); got != 66 {
		t.Fatalf("the second point ordered every pair right: chose %d, want it (66)", got)
	}
	if got := worse.Choose(55, 66); got != 55 {
		t.Fatalf("the second point ordered pairs wrongly: chose %d, want the first (55)", got)
	}
	recs := make([]TraceRecord, 3)
	for i := range recs {
		recs[i].PreToolOutputTokens = 10 * (i + 1)
	}
	if mixed, modes, got := ServedPoints([]int{1, 2, 3}, nil, 0, recs, 50); got[0] != mixed[0] || got[2] != mixed[2] || modes[0] != 50 {
		t.Fatalf("replay before any pair: served %v, want the mixture's %v (modes %v)", got, mixed, modes)
	}
}
