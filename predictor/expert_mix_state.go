package predictor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// ExpertMixStateFile is the file under a state directory that holds an
// ExpertMix's sums (beside OnlineStateFile), so that a restarted deployment
// weighs its experts as it did before.
const ExpertMixStateFile = "length-mix.json"

// expertMixKind and expertMixVersion mark a file Save wrote; any other is
// foreign.
const (
	expertMixKind    = "pitstop.expert_mix"
	expertMixVersion = 1
)

// expertMixFile is ExpertMix's state on disk: the sums per class (first
// segments, later ones) and the ring of finished segments the order score
// pairs the next ones with, plus what makes a file belong to this mixture
// (its scoring, experts, ring size and the model's training median).
type expertMixFile struct {
	stateHeader
	Experts     []string                        `json:"experts"`
	ByOrder     bool                            `json:"by_order"`
	FirstTokens int                             `json:"first_tokens"`
	Window      int                             `json:"order_window"`
	Loss        [2][numExperts]float64          `json:"loss"`
	N           [2][numExperts]float64          `json:"n"`
	First       P2Quantile                      `json:"first"`
	Order       [2][numExperts]float64          `json:"order"`
	Pairs       [2][numExperts]float64          `json:"pairs"`
	Recent      [2][orderWindow]finishedSegment `json:"recent"`
	Seen        [2]int                          `json:"seen"`
}

// finishedSegment is finished as saved.
type finishedSegment struct {
	Points      [numExperts]int `json:"points"`
	WithHistory bool            `json:"with_history"`
	Actual      int             `json:"actual"`
}

// Save writes the mixture's state to dir/ExpertMixStateFile atomically (a
// temporary file renamed over it), so a reader sees the old state or the
// new, never a part.
func (x *ExpertMix) Save(dir string) error {
	x.mu.Lock()
	f := expertMixFile{stateHeader: stateHeader{Kind: expertMixKind, Version: expertMixVersion}, Experts: ExpertNames[:],
		ByOrder: x.byOrder, FirstTokens: x.firstTokens, Window: orderWindow,
		Loss: x.loss, N: x.n, First: x.first, Order: x.order, Pairs: x.pairs, Seen: x.seen}
	for k := range x.recent {
		for i, s := range x.recent[k] {
			f.Recent[k][i] = finishedSegment{Points: s.pts, WithHistory: s.withHistory, Actual: s.actual}
		}
	}
	x.mu.Unlock()
	return saveJSONState(dir, ExpertMixStateFile, "length expert mixture", f)
}

// Restore loads the state Save wrote to dir. No file is not an error (found
// is false). A file that is not valid JSON, not a mixture's, or one of a
// mixture that scores otherwise or starts from another training median
// (another model) is an error, and x is left as it was: the caller starts
// fresh.
func (x *ExpertMix) Restore(dir string) (found bool, err error) {
	return restoreStateFile(dir, ExpertMixStateFile, "length expert mixture", x.restore)
}

// restore takes the state in data, what Save wrote, or says why not and
// leaves x as it was.
func (x *ExpertMix) restore(data []byte) error {
	var f expertMixFile
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := f.belongsTo(x); err != nil {
		return err
	}
	x.loss, x.n, x.first, x.order, x.pairs, x.seen = f.Loss, f.N, f.First, f.Order, f.Pairs, f.Seen
	for k := range f.Recent {
		for i, s := range f.Recent[k] {
			x.recent[k][i] = finished{pts: s.Points, withHistory: s.WithHistory, actual: s.Actual}
		}
	}
	return nil
}

// belongsTo says why f is not a state x can take (nil when it is): another
// kind or version, other experts, scoring, ring or training median, or sums
// that no run of Observe gives (negative, not finite, more errors than
// segments scored).
func (f *expertMixFile) belongsTo(x *ExpertMix) error {
	if err := f.check(expertMixKind, expertMixVersion); err != nil {
		return err
	}
	switch {
	case len(f.Experts) != numExperts || f.Experts[0] != ExpertNames[0] || f.Experts[1] != ExpertNames[1] || f.Experts[2] != ExpertNames[2]:
		return fmt.Errorf("experts %q, want %q", f.Experts, ExpertNames)
	case f.ByOrder != x.byOrder:
		return fmt.Errorf("a mixture scored by order=%v, this one by order=%v", f.ByOrder, x.byOrder)
	case f.FirstTokens != x.firstTokens:
		return fmt.Errorf("saved for a model with training median %d, this one's is %d", f.FirstTokens, x.firstTokens)
	case f.Window != orderWindow:
		return fmt.Errorf("order window %d, want %d", f.Window, orderWindow)
	case !validMedian(f.First):
		return errors.New("the first segments' median is not a P² median")
	}
	for k := range 2 {
		if f.Seen[k] < 0 {
			return errors.New("negative segment count")
		}
		for e := range numExperts {
			for _, v := range []float64{f.Loss[k][e], f.N[k][e], f.Order[k][e], f.Pairs[k][e]} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					return errors.New("a sum that is negative or not finite")
				}
			}
			n, pairs := f.N[k][e], f.Pairs[k][e]
			switch {
			case n != math.Trunc(n) || pairs != math.Trunc(pairs):
				return errors.New("a count of segments or pairs that is not whole")
			case f.Order[k][e] > pairs:
				return errors.New("more pairs ordered wrongly than scored")
			case f.Loss[k][e] > n*maxSavedTokens:
				return fmt.Errorf("a mean error above %g tokens", float64(maxSavedTokens))
			}
		}
	}
	return nil
}

// maxSavedTokens bounds the mean absolute error a saved mixture may hold: no
// segment is that long, and a bound keeps the weights finite.
const maxSavedTokens = 1 << 24

// validMedian says whether q is a P² median that Add could have built:
// finite, ordered markers (sorted samples below 5) within maxSavedTokens.
func validMedian(q P2Quantile) bool {
	fresh := NewP2Quantile(0.5)
	if q.P != 0.5 || q.N < 0 || q.Delta != fresh.Delta {
		return false
	}
	for i := range q.Q {
		if math.Abs(q.Q[i]) > maxSavedTokens || (i > 0 && i < int(q.N) && q.Q[i] < q.Q[i-1]) {
			return false
		}
	}
	if q.N < 5 {
		return true
	}
	for i := range q.Pos {
		if i > 0 && !(q.Pos[i] > q.Pos[i-1]) {
			return false
		}
	}
	return q.Pos[0] == 1 && q.Pos[4] == float64(q.N) && q.Want[0] == 1 && q.Want[4] == float64(q.N)
}
