package predictor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// OnlineOptions configures OnlineLength. Zero values take the defaults noted.
type OnlineOptions struct {
	// Window is how many recent segments the shipped and the learnt model
	// are both scored on (prequentially: each before it learns from the
	// segment) to decide which one predicts (200).
	Window int
	// MinSegments is how many segments must be scored before another
	// predictor may replace the shipped model (10); past it, one replaces
	// it only while it beats it with 95% confidence on the window.
	MinSegments int
	// Replay is how many recent segments are kept to rehearse (2048, 7.5 MB
	// of features: of 512, 2048 and 4096, 2048 learnt fastest on both
	// cross-source streams of docs/results-predictor.md).
	Replay int
	// Steps is the SGD steps per segment learnt: one on the segment and
	// Steps-1 on replayed ones (8).
	Steps int
	// LR is the SGD learning rate (0.05).
	LR float64
	// PublishEvery is how many segments pass between swaps of the weights
	// that predict (16).
	PublishEvery int
	// Seed seeds the replay sampling (1).
	Seed uint64
}

func (o OnlineOptions) withDefaults() OnlineOptions {
	if o.Window <= 0 {
		o.Window = 200
	}
	if o.MinSegments <= 0 {
		o.MinSegments = 10
	}
	if o.Replay <= 0 {
		o.Replay = 2048
	}
	if o.Steps <= 0 {
		o.Steps = 8
	}
	if o.LR <= 0 {
		o.LR = 0.05
	}
	if o.PublishEvery <= 0 {
		o.PublishEvery = 16
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// OnlineLength is a length predictor that learns from the segments a
// deployment finishes. It keeps the shipped model and a copy of its MLP that
// SGD updates on every finished segment (and a few rehearsed recent ones),
// and scores three predictors on each segment before learning from it: the
// shipped model, the learnt copy, and the program's mean so far (the
// shipped model for a program's first segment). It predicts with the
// shipped model unless another of the three beats it on the last Window
// segments with 95% confidence (a paired bound on their error difference,
// after at least MinSegments): the learnt copy is adopted only while it
// does. Predictions
// read an immutable snapshot swapped in atomically every PublishEvery
// segments, so learning never blocks them. It is safe for concurrent use.
type OnlineLength struct {
	base     LengthPredictor
	overflow int
	opt      OnlineOptions

	mu      sync.Mutex // guards everything below; Learn holds it
	learner *MLP
	rng     *rand.Rand
	replayX [][]float32
	replayY []int
	replayN int // records ever added to the replay ring
	win     errWindow
	seen    int
	scratch onlineScratch

	snap atomic.Pointer[onlineSnapshot]
	pool sync.Pool // *predictScratch for PredictLength
}

// onlineSnapshot is what PredictLength reads: weights no one writes.
type onlineSnapshot struct {
	mlp    *MLP
	choice Choice
	// historyScale is the Laplace scale of the history choice's
	// distribution: history's MAE over the window, at least 1 token.
	historyScale float64
}

// Choice is the predictor an OnlineLength predicts with.
type Choice int

// The predictors an OnlineLength chooses among.
const (
	ChoiceShipped Choice = iota // the shipped model
	ChoiceLearnt                // the copy learnt online
	ChoiceHistory               // the program's mean so far
)

func (c Choice) String() string {
	return [...]string{"shipped", "learnt", "history"}[c]
}

type predictScratch struct{ x, hidden []float32 }

type onlineScratch struct{ x, hidden, logits, dlogits, dhidden []float32 }

// errWindow holds the absolute errors of the three predictors on the last
// len(Base) segments, as rings.
type errWindow struct {
	Base, Learnt, History []float64
	Next, N               int
}

func newErrWindow(n int) errWindow {
	return errWindow{Base: make([]float64, n), Learnt: make([]float64, n), History: make([]float64, n)}
}

func (w *errWindow) valid(n int) bool {
	return len(w.Base) == n && len(w.Learnt) == n && len(w.History) == n && w.N >= 0 && w.N <= n && w.Next >= 0 && w.Next < n
}

func (w *errWindow) add(base, learnt, history float64) {
	w.Base[w.Next], w.Learnt[w.Next], w.History[w.Next] = base, learnt, history
	w.Next = (w.Next + 1) % len(w.Base)
	w.N = min(w.N+1, len(w.Base))
}

// mae returns the mean absolute errors of the three over the window.
func (w *errWindow) mae() (base, learnt, history float64) {
	if w.N == 0 {
		return 0, 0, 0
	}
	for i := range w.N {
		base += w.Base[i]
		learnt += w.Learnt[i]
		history += w.History[i]
	}
	n := float64(w.N)
	return base / n, learnt / n, history / n
}

// NewOnlineLength starts online learning on top of base, the shipped model,
// whose MLP weights are mlp (a copy is learnt; mlp is not modified) and whose
// overflow bin predicts overflowTokens.
func NewOnlineLength(base LengthPredictor, mlp *MLP, overflowTokens int, opt OnlineOptions) (*OnlineLength, error) {
	if base == nil || mlp == nil {
		return nil, errors.New("online length: need the shipped model and its MLP weights")
	}
	if err := mlp.validate(); err != nil {
		return nil, fmt.Errorf("online length: %w", err)
	}
	if mlp.In != FeatureDim || mlp.Out != NumClasses {
		return nil, fmt.Errorf("online length: MLP is %d→%d, want %d→%d", mlp.In, mlp.Out, FeatureDim, NumClasses)
	}
	opt = opt.withDefaults()
	o := &OnlineLength{base: base, overflow: overflowTokens, opt: opt, learner: mlp.clone(),
		rng:     rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x0411e)),
		replayX: make([][]float32, opt.Replay), replayY: make([]int, opt.Replay),
		win: newErrWindow(opt.Window),
		scratch: onlineScratch{x: make([]float32, FeatureDim), hidden: make([]float32, mlp.Hidden),
			logits: make([]float32, NumClasses), dlogits: make([]float32, NumClasses), dhidden: make([]float32, mlp.Hidden)},
	}
	o.publish()
	return o, nil
}

func (m *MLP) clone() *MLP {
	c := *m
	c.W1, c.B1 = append([]float32(nil), m.W1...), append([]float32(nil), m.B1...)
	c.W2, c.B2 = append([]float32(nil), m.W2...), append([]float32(nil), m.B2...)
	return &c
}

// publish swaps in a snapshot of the learnt weights and the predictor with
// the lowest error on the window. Callers hold mu (or own o alone).
func (o *OnlineLength) publish() {
	_, _, history := o.win.mae()
	o.snap.Store(&onlineSnapshot{mlp: o.learner.clone(), choice: o.choose(), historyScale: max(history, 1)})
}

// adoptZ is the one-sided normal quantile of the confidence bound a
// predictor must clear to replace the shipped model (95%).
const adoptZ = 1.645

// choose returns the shipped model unless another predictor beats it on the
// window with confidence: the mean of its paired error differences to the
// shipped model (its absolute error minus the shipped model's, segment by
// segment) plus adoptZ standard errors is below zero. Of two that clear the
// bound, the one with the lower MAE predicts. A fixed count of segments would
// adopt on noise in a short window and wait needlessly when one predictor is
// far better; the bound needs few segments for a large, steady gain and many
// for a small one.
func (o *OnlineLength) choose() Choice {
	if o.win.N < o.opt.MinSegments {
		return ChoiceShipped
	}
	_, learnt, history := o.win.mae()
	learntOK := o.win.beatsBase(o.win.Learnt, adoptZ)
	historyOK := o.win.beatsBase(o.win.History, adoptZ)
	switch {
	case learntOK && (!historyOK || learnt <= history):
		return ChoiceLearnt
	case historyOK:
		return ChoiceHistory
	}
	return ChoiceShipped
}

// beatsBase says whether errs (one of the window's rings) beats Base with
// confidence: mean(errs−Base) + z·sd/√n < 0 over the window's segments.
func (w *errWindow) beatsBase(errs []float64, z float64) bool {
	n := w.N
	if n < 2 {
		return false
	}
	var sum, sumSq float64
	for i := range n {
		d := errs[i] - w.Base[i]
		sum += d
		sumSq += d * d
	}
	mean := sum / float64(n)
	v := max(sumSq/float64(n)-mean*mean, 0) * float64(n) / float64(n-1)
	return mean+z*math.Sqrt(v/float64(n)) < 0
}

// historyPrediction is the program's mean so far, or shipped for a
// program's first segment.
func historyPrediction(in Input, shipped int) int {
	if in.History.Calls > 0 {
		return int(math.Round(in.History.MeanOutputTokens))
	}
	return shipped
}

// PredictLength implements LengthPredictor with the chosen predictor. Its
// point is its distribution's median whichever predicts: the history
// choice's distribution is a Laplace around the program's mean, scaled by
// history's error on the window (the shipped model's on a program's first
// segment, where history is the shipped model). It once returned the
// shipped model's distribution with history's point, and a mixture that
// weighs an expert by its point but mixes its distribution (ExpertMix)
// then served the shipped model's median with the weight history had
// earned: on ToolBench's search trees, where history predicted 108 of the
// second half's 118 segments, the mixture scored 71.4 tokens of MAE, the
// shipped model's 71.5 and not the learner's 54.9 (docs/results-predictor.md,
// session 12).
func (o *OnlineLength) PredictLength(in Input) (int, []float32) {
	s := o.snap.Load()
	switch s.choice {
	case ChoiceShipped:
		return o.base.PredictLength(in)
	case ChoiceHistory:
		n, probs := o.base.PredictLength(in)
		if in.History.Calls == 0 || probs == nil {
			return historyPrediction(in, n), probs
		}
		h := historyPrediction(in, n)
		return h, laplaceBins(float64(h), s.historyScale)
	}
	sc, _ := o.pool.Get().(*predictScratch)
	if sc == nil {
		sc = &predictScratch{x: make([]float32, FeatureDim), hidden: make([]float32, s.mlp.Hidden)}
	}
	probs := make([]float32, NumClasses)
	Featurize(in, sc.x)
	s.mlp.Forward(sc.x, sc.hidden, probs)
	o.pool.Put(sc)
	Softmax(probs, probs)
	return LengthQuantile(probs, 0.5, o.overflow), probs
}

// OverflowTokens is the prediction for the overflow bin.
func (o *OnlineLength) OverflowTokens() int { return o.overflow }

// OnlineState is what Stats reports.
type OnlineState struct {
	Seen       int     // segments learnt from
	Window     int     // segments in the scoring window
	ShippedMAE float64 // the shipped model's MAE over the window (tokens)
	LearntMAE  float64 // the learnt model's
	HistoryMAE float64 // the program's mean so far
	Choice     Choice  // the predictor that predicts now
}

// Stats reports what the learner has seen and how both models score.
func (o *OnlineLength) Stats() OnlineState {
	o.mu.Lock()
	defer o.mu.Unlock()
	base, learnt, history := o.win.mae()
	return OnlineState{Seen: o.seen, Window: o.win.N, ShippedMAE: base, LearntMAE: learnt, HistoryMAE: history,
		Choice: o.snap.Load().choice}
}

// Learn scores both models on rec (prequentially: before learning from it),
// then takes Steps SGD steps: one on rec, the rest on replayed recent
// segments. Every PublishEvery segments the weights that predict are swapped.
func (o *OnlineLength) Learn(rec TraceRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	sc := &o.scratch
	y := BinOf(rec.PreToolOutputTokens)
	Featurize(rec.Input, sc.x)
	basePred, _ := o.base.PredictLength(rec.Input)
	o.learner.Forward(sc.x, sc.hidden, sc.logits)
	Softmax(sc.logits, sc.logits)
	learntPred := LengthQuantile(sc.logits, 0.5, o.overflow)
	actual := rec.PreToolOutputTokens
	histPred := historyPrediction(rec.Input, basePred)
	o.win.add(float64(abs(basePred-actual)), float64(abs(learntPred-actual)), float64(abs(histPred-actual)))

	slot := o.replayN % len(o.replayX)
	if o.replayX[slot] == nil {
		o.replayX[slot] = make([]float32, FeatureDim)
	}
	copy(o.replayX[slot], sc.x)
	o.replayY[slot] = y
	o.replayN++
	lr := float32(o.opt.LR)
	o.learner.sgdStep(sc.x, y, lr, sc)
	have := min(o.replayN, len(o.replayX))
	for range o.opt.Steps - 1 {
		i := o.rng.IntN(have)
		o.learner.sgdStep(o.replayX[i], o.replayY[i], lr, sc)
	}
	o.seen++
	if o.seen%o.opt.PublishEvery == 0 {
		o.publish()
	}
}

// sgdStep is one plain SGD step of softmax cross-entropy on (x, y). Only the
// rows of W1 of non-zero features change (features are sparse).
func (m *MLP) sgdStep(x []float32, y int, lr float32, sc *onlineScratch) {
	H, O := m.Hidden, m.Out
	m.Forward(x, sc.hidden, sc.logits)
	softmaxGrad(sc.logits, y, sc.dlogits)
	// The loops reslice to the length they range over and hoist lr·h, so
	// that the compiler drops the bounds checks: the same arithmetic in the
	// same order (bench replays learn on every segment; this is their cost).
	for j, h := range sc.hidden {
		var dh float32
		if h > 0 {
			row := m.W2[j*O : j*O+O][:len(sc.dlogits)]
			lh := lr * h
			for k, d := range sc.dlogits {
				dh += row[k] * d
				row[k] -= lh * d
			}
		}
		sc.dhidden[j] = dh
	}
	for k, d := range sc.dlogits {
		m.B2[k] -= lr * d
	}
	for j, d := range sc.dhidden {
		m.B1[j] -= lr * d
	}
	for i, v := range x[:m.In] {
		if v == 0 {
			continue
		}
		row := m.W1[i*H : i*H+H][:len(sc.dhidden)]
		lv := lr * v
		for j, d := range sc.dhidden {
			row[j] -= lv * d
		}
	}
}

// OnlineStateFile is the file under a state directory that holds the learnt
// model: an ONNX length model (loadable by LoadModel) whose metadata also
// carries the scoring window, so that adoption survives restarts.
const OnlineStateFile = "length-online.onnx"

const (
	metaOnlineWindow = "pitstop.online.window"
	metaOnlineSeen   = "pitstop.online.seen"
)

// Save writes the learnt model and its scoring window to dir/OnlineStateFile,
// atomically.
func (o *OnlineLength) Save(dir string) error {
	o.mu.Lock()
	win, err := json.Marshal(o.win)
	var data []byte
	if err == nil {
		data, err = MarshalONNX(o.learner, o.overflow, map[string]string{
			metaOnlineWindow: string(win), metaOnlineSeen: strconv.Itoa(o.seen)})
	}
	o.mu.Unlock()
	if err != nil {
		return fmt.Errorf("save online length model: %w", err)
	}
	return saveStateFile(dir, OnlineStateFile, "online length model", data)
}

// Restore loads the learnt model and window that Save wrote to dir. A
// directory without the file is not an error (found is false): learning
// starts from the shipped model. A file for other dimensions or another
// feature version is an error, and o is left as it was.
func (o *OnlineLength) Restore(dir string) (found bool, err error) {
	path := filepath.Join(dir, OnlineStateFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("restore online length model: %w", err)
	}
	info, err := ParseONNX(data)
	if err != nil {
		return false, fmt.Errorf("restore online length model %s: %w", path, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if info.MLP == nil || info.MLP.Hidden != o.learner.Hidden {
		return false, fmt.Errorf("restore online length model %s: not an MLP with %d hidden units like the shipped model", path, o.learner.Hidden)
	}
	var win errWindow
	if err := json.Unmarshal([]byte(info.Metadata[metaOnlineWindow]), &win); err != nil || !win.valid(len(o.win.Base)) {
		// A window of another size (or none) restarts the scoring.
		win = newErrWindow(len(o.win.Base))
	}
	seen, _ := strconv.Atoi(info.Metadata[metaOnlineSeen])
	o.learner, o.win, o.seen = info.MLP, win, seen
	o.publish()
	return true, nil
}
