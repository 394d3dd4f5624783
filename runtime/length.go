package runtime

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
)

// Sources of the output-length prediction (Config.Length, LoadLength).
const (
	// LengthONNX is the default ONNX length classifier shipped in the repo
	// (predictor.LoadDefault), run by ONNX Runtime.
	LengthONNX = "onnx"
	// LengthHistory is the program's mean pre-tool output length so far
	// (predictor.HistoryPredictor), DefaultPredictedTokens for a program's
	// first segment.
	LengthHistory = "history"
)

// DefaultPredictedTokens is the history-based estimate of a program's first
// segment, before anything of the program was observed.
const DefaultPredictedTokens = 128

// Length is an output-length predictor with where it comes from: what
// LoadLength returns and Config.Length takes. When the predictor asked for
// could not be loaded, Length holds the history-based fallback and says why.
type Length struct {
	predictor.LengthPredictor
	// Source is what predicts: LengthONNX, LengthHistory or another name.
	Source string
	// Requested is what was asked for (Source unless it fell back).
	Requested string
	// Fallback says why Requested is not in use ("" when it is).
	Fallback string
	// Model is the ONNX model asked for: "default" (predictor.LoadDefault)
	// or a file path; "" for the history-based predictor.
	Model   string
	model   *predictor.Model
	learner *lengthLearner // LearnOnline
	// mix is the expert mixture the runtime predicts with (lengthState.mix),
	// kept here so that LearnOnline restores and saves it beside the
	// learnt model; nil until the runtime or LearnOnline asks for it.
	mix *predictor.ExpertMix
	// led is the window modes and the choice by order that follow the
	// mixture (lengthState.led), kept and saved with it.
	led *predictor.ModeLed
	// tenants are the tenants' own mixtures and window modes (mix and led
	// are the deployment's, for calls without a tenant), kept with them.
	tenants *tenantSteps
	// MaxTenantStates caps the tenants' states held in memory
	// (DefaultTenantStates when 0); set it before the runtime starts.
	MaxTenantStates int
	// mixDir is where KeepMixture keeps mix without online learning ("":
	// nowhere, or the learner keeps it), mixLog where it says so.
	mixDir string
	mixLog *slog.Logger
}

// expertMix is l's expert mixture, started when first asked for (nil
// without an ONNX model): scored by the order of finished segments, its
// first-segment history starting from the model's training median.
func (l *Length) expertMix() *predictor.ExpertMix {
	if l.mix == nil && l.model != nil {
		l.mix = predictor.ServedMix(predictor.TrainMedian(l.model.Info()))
	}
	return l.mix
}

// modeLed is l's window modes and choice by order, started with the
// mixture (nil without an ONNX model); the mode starts at the model's
// training median.
func (l *Length) modeLed() *predictor.ModeLed {
	if l.led == nil && l.model != nil {
		l.led = predictor.NewModeLed(predictor.TrainMedian(l.model.Info()))
	}
	return l.led
}

// tenantSteps is l's per-tenant steps, started with the mixture (nil
// without an ONNX model), beside the deployment's own.
func (l *Length) tenantSteps() *tenantSteps {
	if l.tenants == nil && l.model != nil {
		max := l.MaxTenantStates
		if max <= 0 {
			max = DefaultTenantStates
		}
		l.tenants = newTenantSteps(predictor.TrainMedian(l.model.Info()),
			predictor.ServedStep{Mix: l.expertMix(), Led: l.modeLed()}, max, l.mixLog)
	}
	return l.tenants
}

// LengthModelFile is the file name of a served model's own length
// classifier: a model directory holding one predicts with it (LoadLengthFor).
const LengthModelFile = "length.onnx"

// LoadLength loads the length predictor called source: LengthONNX (also
// "") or LengthHistory. When ONNX Runtime or the model cannot be loaded (no
// library at PITSTOP_ORT_LIB or the cache, a library that fails to load),
// it returns the history-based predictor with Fallback set: a server keeps
// serving, with the reason in its logs and /metrics. Only an unknown source
// is an error. Close releases the model.
func LoadLength(source string) (*Length, error) { return LoadLengthFor(source, "") }

// LoadLengthFor is LoadLength for a served model whose directory is
// modelDir ("" for none): with LengthONNX, the directory's own classifier
// (LengthModelFile, trained on that model's outputs) when it has one, else
// the default one. source may also be the path of an ONNX length model
// (ending in ".onnx"); a path that does not exist is an error.
// Describe says in a few words which predictor serves and why: "onnx
// (MODEL)", or "history (onnx unavailable: REASON)".
func (l *Length) Describe() string {
	switch {
	case l.Fallback != "":
		return l.Source + " (" + l.Requested + " unavailable: " + l.Fallback + ")"
	case l.Model != "" && l.learner != nil:
		return l.Source + " (" + l.Model + ", learning online)"
	case l.Model != "":
		return l.Source + " (" + l.Model + ")"
	}
	return l.Source
}

func LoadLengthFor(source, modelDir string) (*Length, error) {
	path := ""
	switch {
	case source == "" || source == LengthONNX:
		if modelDir != "" {
			if p := filepath.Join(modelDir, LengthModelFile); fileExists(p) {
				path = p
			}
		}
	case strings.HasSuffix(source, ".onnx"):
		if !fileExists(source) {
			return nil, fmt.Errorf("length model %s: no such file", source)
		}
		path = source
	case source == LengthHistory:
		return &Length{LengthPredictor: predictor.HistoryPredictor{Default: DefaultPredictedTokens},
			Source: LengthHistory, Requested: LengthHistory}, nil
	default:
		return nil, fmt.Errorf("unknown length predictor %q (valid: %s, %s, or the path of an ONNX length model)", source, LengthONNX, LengthHistory)
	}
	name, load := "default", predictor.LoadDefault
	if path != "" {
		name, load = path, func() (*predictor.Model, error) { return predictor.LoadModel(path) }
	}
	m, err := load()
	if err != nil {
		return &Length{LengthPredictor: predictor.HistoryPredictor{Default: DefaultPredictedTokens},
			Source: LengthHistory, Requested: LengthONNX, Fallback: err.Error(), Model: name}, nil
	}
	return &Length{LengthPredictor: m, Source: LengthONNX, Requested: LengthONNX, Model: name, model: m}, nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// Close stops online learning (saving its state), saves the mixture
// KeepMixture keeps, and releases the ONNX model, if any. The predictor
// must not be used after.
func (l *Length) Close() error {
	if l == nil {
		return nil
	}
	if l.learner != nil {
		l.learner.close()
	} else {
		l.saveMixture()
	}
	l.tenants.close()
	if l.model == nil {
		return nil
	}
	return l.model.Close()
}

// lengthState is the runtime's length predictor and its metrics.
type lengthState struct {
	p       predictor.LengthPredictor
	history predictor.HistoryPredictor // when p gives no prediction
	source  string
	abs     prometheus.Observer
	rel     prometheus.Observer
	learner *lengthLearner // nil unless the predictor learns online
	// mix mixes the model's program-blended predictions with the history
	// baseline, learnt across the deployment's programs by how well each
	// ordered the finished segments (predictor.OrderScored: policies rank
	// by the prediction); nil without a model.
	mix *predictor.ExpertMix
	// led chooses between the mixture's point and the deployment's window
	// mode by how each ordered the finished segments (predictor.ModeLed);
	// nil, the mixture's point, without a mixture.
	led *predictor.ModeLed
	// tenants holds each tenant's own mixture and window modes, mix and
	// led being the deployment's for calls without a tenant; nil without
	// a mixture.
	tenants *tenantSteps
}

// newLengthState sets up the predictor of Config.Length (nil: history),
// says once in the log and in /metrics which one predicts, and why it is not
// the one requested when it fell back.
func newLengthState(l predictor.LengthPredictor, m *Metrics, log *slog.Logger) *lengthState {
	st := &lengthState{p: l, history: predictor.HistoryPredictor{Default: DefaultPredictedTokens}}
	requested, fallback, model := "", "", ""
	switch v := l.(type) {
	case nil:
		st.p, st.source = st.history, LengthHistory
	case *Length:
		if v == nil {
			st.p, st.source = st.history, LengthHistory
			break
		}
		st.p, st.source, requested, fallback, model = v.LengthPredictor, v.Source, v.Requested, v.Fallback, v.Model
		st.mix, st.led, st.tenants = v.expertMix(), v.modeLed(), v.tenantSteps()
		if v.learner != nil {
			st.learner = v.learner
			v.learner.registerMetrics(m.Registry)
		}
	case *predictor.Model:
		st.source = LengthONNX
		st.mix = predictor.ServedMix(predictor.TrainMedian(v.Info()))
		st.led = predictor.NewModeLed(predictor.TrainMedian(v.Info()))
		st.tenants = newTenantSteps(predictor.TrainMedian(v.Info()), predictor.ServedStep{Mix: st.mix, Led: st.led}, DefaultTenantStates, log)
	case predictor.HistoryPredictor, *predictor.HistoryPredictor:
		st.source = LengthHistory
	case predictor.GoClassifier, *predictor.GoClassifier:
		st.source = "go"
		st.mix = predictor.ServedMix(-1) // no training median known: later segments only
		st.led = predictor.NewModeLed(-1)
		st.tenants = newTenantSteps(-1, predictor.ServedStep{Mix: st.mix, Led: st.led}, DefaultTenantStates, log)
	default:
		st.source = fmt.Sprintf("%T", l)
	}
	if requested == "" {
		requested = st.source
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pitstop_predictor_info",
		Help: "The output-length predictor in use (source: onnx, history, ...), the one requested, the ONNX model asked for (default, or a file), and why it fell back when it did (value 1).",
	}, []string{"source", "requested", "model", "fallback"})
	info.WithLabelValues(st.source, requested, model, fallback).Set(1)
	abs := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pitstop_predictor_length_error_tokens",
		Help:    "Absolute error of the predicted output length of a call segment (tokens before its tool call, or to its end) against the tokens it generated, by predictor source.",
		Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
	}, []string{"source"})
	rel := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pitstop_predictor_length_relative_error",
		Help:    "|predicted - generated| / generated output tokens of call segments, by predictor source.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10},
	}, []string{"source"})
	m.Registry.MustRegister(info, abs, rel)
	st.tenants.registerMetrics(m.Registry)
	st.abs, st.rel = abs.WithLabelValues(st.source), rel.WithLabelValues(st.source)
	if fallback != "" {
		log.Warn("length predictor: "+requested+" unavailable, using history-based estimates", "source", st.source, "requested", requested, "model", model, "reason", fallback)
	} else {
		log.Info("length predictor", "source", st.source, "model", model)
	}
	return st
}

// predict is a segment's predicted output length in tokens (≥ 1) and, when
// the predictor gives one, its distribution for policies (engine.Forecast).
func (l *lengthState) predict(in predictor.Input) (int, *engine.Distribution) {
	n, probs := l.p.PredictLength(in)
	if n < 0 {
		n, _ = l.history.PredictLength(in)
		return max(n, 1), nil
	}
	var dist *engine.Distribution
	if len(probs) == predictor.NumClasses {
		over := predictor.DefaultOverflowTokens
		if o, ok := l.p.(interface{ OverflowTokens() int }); ok {
			over = o.OverflowTokens()
		}
		dist = &engine.Distribution{LengthProbs: probs, LengthBinWidth: predictor.BinWidth, OverflowTokens: over}
	}
	return max(n, 1), dist
}

// observe books a finished segment's prediction error and hands it to the
// online learner, if any.
func (l *lengthState) observe(predicted int, rec predictor.TraceRecord) {
	if l.learner != nil {
		l.learner.learn(rec)
	}
	generated := rec.PreToolOutputTokens
	if predicted <= 0 {
		return
	}
	d := math.Abs(float64(predicted - generated))
	l.abs.Observe(d)
	if generated > 0 {
		l.rel.Observe(d / float64(generated))
	}
}

// segmentInput is what the length predictor knows of the segment about to
// be generated: the prompt's system prompt and last message (and the tool
// whose result it is and that call's argument class, when the call's
// previous segment called one or the request ends in a client's tool
// results), the
// tools offered and the size of their schemas, the context length and the
// program's history. It reads nothing of the segment itself.
func (s *seqCtl) segmentInput() predictor.Input {
	names := make([]string, 0, len(s.turn.Tools))
	schema := 0
	for _, t := range s.turn.Tools {
		names = append(names, t.Name)
		schema += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	lastTool := s.requestTool
	if n := len(s.segments); n > 0 {
		lastTool = s.segments[n-1].Tool
	}
	lastClass := ""
	if lastTool != "" {
		lastClass = s.lastToolClass
	}
	return predictor.Input{SystemPrompt: s.systemPrompt, LastMessage: s.lastMessage, ToolNames: names,
		PromptTokens: s.segPrompt, LastTool: lastTool, LastToolClass: lastClass, ToolSchemaBytes: schema,
		Retry: s.retry && len(s.segments) == 0, History: s.history}
}

// answeredCall is the tool, and its call's argument class, whose result
// ends msgs: when the last message is a tool result (a client ran the
// tools), the first call of the assistant turn it answers, as a round's
// trace record names its first call; else "", "". What the trace
// converters derive from a program's previous segment (predictor.
// DeriveContext, DeriveToolClasses), known here from the request.
func answeredCall(msgs []chat.Message) (tool, class string) {
	n := len(msgs)
	if n == 0 || msgs[n-1].Role != chat.RoleTool {
		return "", ""
	}
	for i := n - 2; i >= 0; i-- {
		switch m := msgs[i]; {
		case m.Role == chat.RoleAssistant && len(m.ToolCalls) > 0:
			return m.ToolCalls[0].Name, predictor.ArgumentClass(m.ToolCalls[0].Arguments)
		case m.Role != chat.RoleTool:
			return "", ""
		}
	}
	return "", ""
}

// predictLength predicts the output length of the segment about to start
// (the call's first, or the next after a tool round): the predictor's
// output, the same blended with the program's mean by how well each
// predicted the program's earlier segments (predictor.ProgramBlend), and
// the history baseline, mixed by how well each ordered the tenant's
// finished segments (predictor.OrderScored); the point is the median of the
// mixed distribution, which is the one policies see. The mixture and the
// window modes are the call's tenant's (tenantSteps).
//
// Then the point is the mixture's or the tenant's window mode for the
// segment's class, whichever has ordered the finished segments better
// (predictor.ModeLed, what `pitstop predictor eval --online` replays); the
// distribution stays the mixture's.
func (s *seqCtl) predictLength() {
	in := s.segmentInput()
	s.predModel, s.predDist = s.rt.length.predict(in)
	var probs []float32
	over := 0
	if s.predDist != nil {
		probs, over = s.predDist.LengthProbs, s.predDist.OverflowTokens
	}
	p := s.call.length.served().Predict(s.blend, in, s.predModel, probs, over)
	if s.predDist == nil {
		// No length part; the tool part is filled at the pause
		// (forecastToolTime), in the forecast the engine holds.
		s.predDist = &engine.Distribution{}
	} else {
		s.predDist.LengthProbs = p.Dist
	}
	p.Dist = nil // the forecast holds it; observeLength books the points only
	s.predServed = p
	s.predTokens = max(p.Point, 1)
}

// observeLength books the segment that just ended, of out tokens before
// its call of tool ("" for none), with the input it was predicted from:
// the tenant's mixture and window modes and the program's blend learn
// it (predictor.ServedStep, as predictLength predicted it).
func (s *seqCtl) observeLength(in predictor.Input, out int, tool string) {
	s.blend = s.call.length.served().Observe(s.blend, in, s.predServed, out, tool)
}

// toolTimeLevels are the tool-duration quantiles a forecast's distribution
// carries (those predictor.DurationEstimator tracks), as bench's do.
var toolTimeLevels = []float64{0.5, 0.9}

// forecastToolTime puts the paused tool round's duration quantiles into the
// current segment's forecast (engine.Distribution), where policies read
// them at the pause: each level's largest over the round's calls (they run
// together), from quantile. The engine made the forecast when the segment
// became runnable and holds the same *Distribution, so it is filled in place
// (on the engine's goroutine, which alone reads it).
func (s *seqCtl) forecastToolTime(calls []chat.ToolCall, quantile func(c chat.ToolCall, q float64) (float64, bool)) {
	var levels, values []float64
	for _, q := range toolTimeLevels {
		v, any := 0.0, false
		for _, c := range calls {
			if x, ok := quantile(c, q); ok {
				v, any = max(v, x), true
			}
		}
		if any {
			levels, values = append(levels, q), append(values, v)
		}
	}
	if len(levels) == 0 || s.predDist == nil {
		return
	}
	s.predDist.ToolTimeLevels, s.predDist.ToolTimeQuantiles = levels, values
}
