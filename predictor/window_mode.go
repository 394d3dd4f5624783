package predictor

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Acc-5 counts a prediction within ±5 tokens of the actual length, so the
// point that maximises it is the centre of the densest 11-token window of
// the predictive distribution (a mode), not the median that minimises the
// absolute error and that policies rank by. WindowModes measures that point
// from the lengths a deployment has finished, per class of what is known
// before a segment: how far a mode gets on Acc-5, and what it costs the MAE
// and the order (docs/results-predictor.md, 2026-11-27, session 8). Serve
// predicts with it where it orders better than the mixture (ModeLed).

// acc5HalfWidth is Acc-5's tolerance: |predicted − actual| ≤ 5.
const acc5HalfWidth = 5

// windowModeMinSegments is how many finished segments a class needs before
// its window predicts; fewer, and the next coarser class does. Of 1, 4, 8,
// 16 and 32, 8 was within 0.5 points of the best second-half Acc-5 on
// infercept+bfcl, tau and the coding agent.
const windowModeMinSegments = 8

// lengthWindows counts the finished lengths in every 11-token window (by
// its centre) and keeps the densest, the first to reach its count.
type lengthWindows struct {
	count     map[int]int
	n         int
	best, top int
}

func (w *lengthWindows) add(x int) {
	if w.count == nil {
		w.count = make(map[int]int)
	}
	w.n++
	// From x outward, so that of the windows that reach a new top together
	// the one centred nearest the new length wins (a repeated length is
	// predicted exactly).
	for d := range 2*acc5HalfWidth + 1 {
		c := x + (d+1)/2*(1-2*(d%2)) // x, x-1, x+1, x-2, ...
		w.count[c]++
		if w.count[c] > w.top {
			w.best, w.top = c, w.count[c]
		}
	}
}

// modeClass is a class of segments WindowModes keeps a window for: a level
// of detail (0 the finest) and what the segment resumes after (the tool, and
// the argument class of its call), the log2 bucket of the program's previous
// output and of the last message's bytes.
type modeClass struct {
	level      int
	lastTool   string
	toolClass  string
	prev, last int
}

// modeRootLevel is the coarsest class, every segment's.
const modeRootLevel = 4

// WindowModes predicts the centre of the densest 11-token window of the
// lengths finished in a segment's class. The finest, where the call whose
// result the segment reads has an argument class (Input.LastToolClass: a
// shell command's program, a URL's host), is that tool and class with the
// log2 bucket of the last message's length; then the tool (or a user's
// message, or a program's start) with the log2 buckets of the program's
// previous output length and of the last message's length; backing off to
// coarser classes (without the message, then without the previous length,
// then none) while a class has fewer than windowModeMinSegments. On the
// coding agent the argument class raised the second half's Acc-5 from 26.5%
// to 30.1% (docs/results-predictor.md, session 10). Not safe for
// concurrent use.
type WindowModes struct {
	classes map[modeClass]*lengthWindows
}

// NewWindowModes starts with no segment finished.
func NewWindowModes() *WindowModes {
	return &WindowModes{classes: make(map[modeClass]*lengthWindows)}
}

func modeClasses(in Input, buf *[modeRootLevel + 1]modeClass) []modeClass {
	last := in.LastTool
	switch {
	case last != "":
	case in.History.Calls > 0:
		last = "\x00user"
	default:
		last = "\x00start"
	}
	prev := -1
	if in.History.Calls > 0 {
		prev = magnitude(int(in.History.LastOutputTokens))
	}
	msg := magnitude(len(in.LastMessage))
	// Into buf, so that a prediction allocates nothing.
	*buf = [...]modeClass{{0, last, in.LastToolClass, 0, msg}, {1, last, "", prev, msg}, {2, last, "", prev, 0}, {3, last, "", 0, 0}, {level: modeRootLevel}}
	if in.LastToolClass == "" {
		return buf[1:]
	}
	return buf[:]
}

// magnitude is floor(log2 n), 0 for n ≤ 1.
func magnitude(n int) int { return int(math.Log2(float64(max(n, 1)))) }

// Predict is the window's centre for a segment with input in, and false
// before any segment has finished.
func (m *WindowModes) Predict(in Input) (int, bool) {
	var buf [modeRootLevel + 1]modeClass
	cs := modeClasses(in, &buf)
	for _, c := range cs {
		if w := m.classes[c]; w != nil && w.n >= windowModeMinSegments {
			return w.best, true
		}
	}
	if w := m.classes[cs[len(cs)-1]]; w != nil {
		return w.best, true
	}
	return 0, false
}

// maxModeClasses bounds the classes WindowModes keeps: argument classes
// (programs, hosts) come from the deployment's calls and are unbounded.
// Past it a segment of a new class books only the classes that exist (the
// coarsest always does); the traces this was measured on have a few
// hundred.
const maxModeClasses = 1 << 14

// Observe books a finished segment of actual tokens whose input was in.
func (m *WindowModes) Observe(in Input, actual int) {
	var buf [modeRootLevel + 1]modeClass
	for _, c := range modeClasses(in, &buf) {
		w := m.classes[c]
		if w == nil {
			if len(m.classes) >= maxModeClasses && c.level != modeRootLevel {
				continue
			}
			w = &lengthWindows{}
			m.classes[c] = w
		}
		w.add(actual)
	}
}

// RankCorrelation is Spearman's rank correlation between the predictions
// and the records' actual lengths (ties ranked by their mean rank): how
// well the points order the segments, which a policy that ranks by them
// needs, and Acc-5 and MAE do not measure. NaN for fewer than two records
// or a constant.
func RankCorrelation(pred []int, recs []TraceRecord) float64 {
	if len(pred) != len(recs) || len(pred) < 2 {
		return math.NaN()
	}
	actual := make([]float64, len(recs))
	p := make([]float64, len(pred))
	for i, r := range recs {
		actual[i], p[i] = float64(r.PreToolOutputTokens), float64(pred[i])
	}
	return stat.Correlation(ranks(p), ranks(actual), nil)
}

// ranks are xs' ranks from 1, tied values sharing their mean rank.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		mean := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			r[idx[k]] = mean
		}
		i = j
	}
	return r
}
