package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitstop-llm/pitstop/predictor"
)

// Online learning of the length model: every finished segment is handed to
// a learner goroutine (never blocking the engine; a full queue drops the
// segment and counts it), which updates a copy of the shipped model
// (predictor.OnlineLength), swaps it in for predictions only while it beats
// the shipped model on the recent segments, and saves it under the state
// directory so a restart keeps what the deployment learnt.

// onlineQueue is how many finished segments may wait for the learner.
const onlineQueue = 1024

// onlineSaveEvery is how many learnt segments pass between saves to the
// state directory (and one more at Close).
const onlineSaveEvery = 256

// onlineCPUShare is the most of one core the learner takes: after learning a
// segment it idles for the time that keeps it at this share, so that learning
// never competes with serving for more (segments that arrive faster wait in
// the queue, and beyond it are dropped and counted).
const onlineCPUShare = 0.05

// lengthLearner is Length's online-learning goroutine.
type lengthLearner struct {
	online   *predictor.OnlineLength
	mix      *predictor.ExpertMix // saved beside the learnt model
	led      *predictor.ModeLed   // likewise
	tenants  *tenantSteps         // likewise, each tenant's
	stateDir string
	log      *slog.Logger
	queue    chan predictor.TraceRecord
	stop     chan struct{} // closed by close: stop idling
	done     chan struct{}
	mu       sync.Mutex // guards dropped, closed
	dropped  int
	closed   bool
}

// LearnOnline makes l learn from the segments the runtime finishes, on top
// of its ONNX model; stateDir ("" for none) keeps the learnt model across
// restarts (predictor.OnlineStateFile), and beside it the expert mixture's
// sums (predictor.ExpertMixStateFile) and the window modes
// (predictor.ModeLedStateFile): a mixture or modes file that cannot be read
// (corrupt, or another model's) is logged as a warning and the mixture
// starts fresh, replacing it at the next save. It is an error when l predicts
// without an ONNX model (the history fallback) or the model's graph is not
// the plain MLP the learner updates. Close stops the learner and saves.
func (l *Length) LearnOnline(stateDir string, opt predictor.OnlineOptions, log *slog.Logger) error {
	if l.model == nil {
		return fmt.Errorf("online learning needs the ONNX length model; %s predicts", l.Describe())
	}
	if l.learner != nil {
		return errors.New("online learning already on")
	}
	info := l.model.Info()
	if info.MLP == nil {
		return fmt.Errorf("online learning: length model %s is not a plain MLP", l.Model)
	}
	o, err := predictor.NewOnlineLength(l.model, info.MLP, info.OverflowTokens, opt)
	if err != nil {
		return err
	}
	if log == nil {
		log = slog.Default()
	}
	if stateDir != "" {
		found, err := o.Restore(stateDir)
		if err != nil {
			return err
		}
		if found {
			st := o.Stats()
			log.Info("length predictor: restored the online model", "dir", stateDir, "seen", st.Seen, "predicting", st.Choice.String())
		}
	}
	mix, led := l.expertMix(), l.modeLed()
	if stateDir != "" && stateDir != l.mixDir { // KeepMixture restored it already
		restoreMixture(mix, led, stateDir, log)
		l.keepTenants(stateDir, log)
	}
	ln := &lengthLearner{online: o, mix: mix, led: led, tenants: l.tenantSteps(), stateDir: stateDir, log: log,
		queue: make(chan predictor.TraceRecord, onlineQueue), stop: make(chan struct{}), done: make(chan struct{})}
	go ln.run()
	l.learner = ln
	l.LengthPredictor = o
	return nil
}

// Online is the online learner, nil when l does not learn.
func (l *Length) Online() *predictor.OnlineLength {
	if l == nil || l.learner == nil {
		return nil
	}
	return l.learner.online
}

func (ln *lengthLearner) run() {
	defer close(ln.done)
	n := 0
	for rec := range ln.queue {
		start := time.Now()
		ln.online.Learn(rec)
		if n++; n%onlineSaveEvery == 0 {
			ln.save()
		}
		idle := time.Duration(float64(time.Since(start)) * (1/onlineCPUShare - 1))
		select {
		case <-time.After(idle):
		case <-ln.stop:
			// Closing: learn what is queued without idling.
		}
	}
	ln.save()
}

func (ln *lengthLearner) save() {
	if ln.stateDir == "" {
		return
	}
	if err := ln.online.Save(ln.stateDir); err != nil {
		ln.log.Warn("length predictor: saving the online model", "err", err)
	}
	saveMixture(ln.mix, ln.led, ln.stateDir, ln.log)
	ln.tenants.saveAll()
}

// learn queues a finished segment; it never blocks.
func (ln *lengthLearner) learn(rec predictor.TraceRecord) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if ln.closed {
		return
	}
	select {
	case ln.queue <- rec:
	default:
		ln.dropped++
	}
}

// close stops the learner after the queued segments and saves its state.
func (ln *lengthLearner) close() {
	ln.mu.Lock()
	if !ln.closed {
		ln.closed = true
		close(ln.stop)
		close(ln.queue)
	}
	ln.mu.Unlock()
	<-ln.done
}

// Dropped is how many segments arrived while the learner's queue was full.
func (ln *lengthLearner) droppedCount() int {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	return ln.dropped
}

// registerMetrics exports the learner's state: segments learnt and dropped,
// both models' MAE over the scoring window, and whether the learnt model
// predicts.
func (ln *lengthLearner) registerMetrics(reg prometheus.Registerer) {
	gauge := func(name, help string, f func(predictor.OnlineState) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(ln.online.Stats()) })
	}
	reg.MustRegister(
		gauge("pitstop_predictor_online_segments", "Finished segments the online length learner has learnt from (this process and those it restored).",
			func(s predictor.OnlineState) float64 { return float64(s.Seen) }),
		gauge("pitstop_predictor_online_adopted", "1 while the online-learnt length model predicts (it beats the shipped model and the program's mean on recent segments), else 0.",
			func(s predictor.OnlineState) float64 { return b2f(s.Choice == predictor.ChoiceLearnt) }),
		gauge("pitstop_predictor_online_history_mae_tokens", "The program's-mean-so-far predictor's mean absolute error over the same recent segments (the online learner predicts with it while it is the best of the three).",
			func(s predictor.OnlineState) float64 { return s.HistoryMAE }),
		gauge("pitstop_predictor_online_shipped_mae_tokens", "The shipped length model's mean absolute error over the recent segments the learner scores both models on.",
			func(s predictor.OnlineState) float64 { return s.ShippedMAE }),
		gauge("pitstop_predictor_online_learnt_mae_tokens", "The online-learnt length model's mean absolute error over the same recent segments.",
			func(s predictor.OnlineState) float64 { return s.LearntMAE }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "pitstop_predictor_online_dropped_total",
			Help: "Finished segments the online length learner dropped because its queue was full."},
			func() float64 { return float64(ln.droppedCount()) }),
	)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
