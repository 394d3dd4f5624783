package runtime

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/models/builtin"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
)

// fixedLength predicts n tokens and records what it was asked.
type fixedLength struct {
	n  int
	mu sync.Mutex
	in []predictor.Input
}

func (f *fixedLength) PredictLength(in predictor.Input) (int, []float32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.in = append(f.in, in)
	return f.n, nil
}

// retries is the Retry flag of every input predicted so far, in order.
func (f *fixedLength) retries() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	var seen []bool
	for _, in := range f.in {
		seen = append(seen, in.Retry)
	}
	return seen
}

// forecastPolicy records the forecasts the policy sees.
type forecastPolicy struct {
	engine.Policy
	mu        sync.Mutex
	forecasts []engine.Forecast
}

func (p *forecastPolicy) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	p.mu.Lock()
	p.forecasts = append(p.forecasts, s.Forecast())
	p.mu.Unlock()
	return p.Policy.Priority(v, s)
}

// The length predictor gives every segment's forecast its output length,
// from the prompt's text, the tools offered and the program's history; its
// error against the generated tokens is a metric.
func TestLengthPredictorForecast(t *testing.T) {
	base, err := policy.New(DefaultPolicy, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol := &forecastPolicy{Policy: base}
	lp := &fixedLength{n: 77}
	rt := newTestRuntime(t, Config{PolicyImpl: pol, Length: lp})
	ctx := context.Background()
	res, err := rt.ChatSync(ctx, ChatRequest{Program: "p1",
		Messages: []chat.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "What is (17+25)*3?"}},
		Tools:    []chat.Tool{calcTool}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 {
		t.Fatalf("rounds %+v", res.Rounds)
	}
	lp.mu.Lock()
	ins := slices.Clone(lp.in)
	lp.mu.Unlock()
	if len(ins) != 2 {
		t.Fatalf("%d predictions, want 2 (the first segment, and the one after the tool round)", len(ins))
	}
	first, second := ins[0], ins[1]
	if first.SystemPrompt != "Be brief." || first.LastMessage != "What is (17+25)*3?" || !slices.Equal(first.ToolNames, []string{"calculator"}) ||
		first.PromptTokens <= 0 || first.History.Calls != 0 {
		t.Errorf("first segment's input %+v", first)
	}
	if second.LastMessage != "126" || second.History.Calls != 1 || len(second.History.ToolsCalled) != 1 || second.PromptTokens <= first.PromptTokens {
		t.Errorf("second segment's input %+v", second)
	}
	pol.mu.Lock()
	fs := slices.Clone(pol.forecasts)
	pol.mu.Unlock()
	if len(fs) == 0 {
		t.Fatal("the policy saw no forecast")
	}
	if f := fs[0]; f.Predicted.Decode != 77 || !f.HasTruth || f.Truth.Decode == 77 || !f.Predicted.HasTool {
		t.Errorf("first forecast %+v: want the predictor's 77 tokens, the script's truth and its tool call", f)
	}
	if n := histCount(t, rt, "pitstop_predictor_length_error_tokens"); n != 2 {
		t.Errorf("length error observations %d, want 2", n)
	}
	if v := gaugeWith(t, rt, "pitstop_predictor_info", map[string]string{"source": "*runtime.fixedLength"}); v != 1 {
		t.Errorf("pitstop_predictor_info = %v", v)
	}
}

// The ONNX model shipped in the repo predicts the runtime's forecasts:
// a program's first segment is the model's distribution mixed with the
// history baseline (the model's training median), the experts at even
// weights, as no segment has finished yet (predictor.ExpertMix).
func TestLengthONNX(t *testing.T) {
	if err := predictor.InitORT(); err != nil {
		t.Skipf("no ONNX Runtime (%v): export PITSTOP_ORT_LIB=$(scripts/fetch_ort.sh)", err)
	}
	l, err := LoadLength(LengthONNX)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Source != LengthONNX || l.Fallback != "" {
		t.Fatalf("loaded %+v", l)
	}
	base, _ := policy.New(DefaultPolicy, policy.Options{})
	pol := &forecastPolicy{Policy: base}
	var logs bytes.Buffer
	rt := newTestRuntime(t, Config{PolicyImpl: pol, Length: l, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	req := ChatRequest{Messages: []chat.Message{{Role: "user", Content: "What is (17+25)*3?"}}, Tools: []chat.Tool{calcTool}}
	if _, err := rt.ChatSync(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	pol.mu.Lock()
	f := pol.forecasts[0]
	pol.mu.Unlock()
	schema := len(calcTool.Name) + len(calcTool.Description) + len(calcTool.Parameters)
	model, probs := l.PredictLength(predictor.Input{LastMessage: "What is (17+25)*3?", ToolNames: []string{"calculator"},
		PromptTokens: firstPromptTokens(t, rt, req), ToolSchemaBytes: schema})
	median := predictor.TrainMedian(l.model.Info())
	if median < 0 {
		t.Fatal("the shipped model has no training median in its metadata")
	}
	want, _, _ := predictor.OrderScored(median).Predict(predictor.ProgramBlend{}, model, probs, l.model.OverflowTokens())
	if f.Predicted.Decode != max(want, 1) {
		t.Errorf("forecast %d tokens, the model (%d) mixed evenly with the training median (%d) gives %d", f.Predicted.Decode, model, median, want)
	}
	if v := gaugeWith(t, rt, "pitstop_predictor_mix_weight", map[string]string{"segments": "later", "expert": "history"}); v <= 0 || v >= 1 {
		t.Errorf("pitstop_predictor_mix_weight{segments=later,expert=history} = %v", v)
	}
	if f.Dist == nil || len(f.Dist.LengthProbs) != predictor.NumClasses || f.Dist.OverflowTokens != l.model.OverflowTokens() {
		t.Errorf("forecast distribution %+v, want the model's %d bin probabilities", f.Dist, predictor.NumClasses)
	}
	if v := gaugeWith(t, rt, "pitstop_predictor_info", map[string]string{"source": "onnx", "requested": "onnx", "fallback": ""}); v != 1 {
		t.Errorf("pitstop_predictor_info{source=onnx} = %v", v)
	}
	if !bytes.Contains(logs.Bytes(), []byte("length predictor")) || !bytes.Contains(logs.Bytes(), []byte("source=onnx")) {
		t.Errorf("log: %s", logs.String())
	}
}

func firstPromptTokens(t *testing.T, rt *Runtime, req ChatRequest) int {
	t.Helper()
	offered, _, err := rt.resolveTools("", req.Tools)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rt.tmpl.RenderSpans(req.Messages, offered, true)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := r.Encode(rt.tok)
	if err != nil {
		t.Fatal(err)
	}
	return len(toks)
}

// A served model's directory with its own length.onnx predicts with it;
// without one the default model; a model file given by path must exist.
func TestLoadLengthForModelDir(t *testing.T) {
	ort := predictor.InitORT() == nil
	check := func(l *Length, err error, model string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if l.Model != model || l.Requested != LengthONNX {
			t.Fatalf("model %q requested %q, want %q", l.Model, l.Requested, model)
		}
		if ort && (l.Source != LengthONNX || l.Fallback != "") || !ort && l.Source != LengthHistory {
			t.Fatalf("source %q fallback %q (ONNX Runtime present: %v)", l.Source, l.Fallback, ort)
		}
	}
	dir := t.TempDir()
	l, err := LoadLengthFor(LengthONNX, dir)
	check(l, err, "default")
	own := filepath.Join(dir, LengthModelFile)
	data, err := os.ReadFile(filepath.Join("..", "predictor", "data", "default.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, data, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = LoadLengthFor(LengthONNX, dir)
	check(l, err, own)
	l, err = LoadLengthFor(own, "")
	check(l, err, own)
	if _, err := LoadLengthFor(filepath.Join(dir, "none.onnx"), ""); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing model file: %v", err)
	}
	// The built-in tiny model ships its own.
	tiny, err := builtin.Dir(builtin.TinyTools)
	if err != nil {
		t.Fatal(err)
	}
	l, err = LoadLengthFor(LengthONNX, tiny)
	check(l, err, filepath.Join(tiny, LengthModelFile))
}

func TestLoadLengthUnknown(t *testing.T) {
	if _, err := LoadLength("oracle"); err == nil {
		t.Fatal("no error for an unknown predictor")
	}
	l, err := LoadLength(LengthHistory)
	if err != nil || l.Source != LengthHistory || l.Fallback != "" {
		t.Fatalf("history: %+v %v", l, err)
	}
}

func histCount(t *testing.T, rt *Runtime, name string) uint64 {
	t.Helper()
	var n uint64
	for _, m := range metricsNamed(t, rt, name) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// gaugeWith is the value of the gauge whose labels include want (-1: none).
func gaugeWith(t *testing.T, rt *Runtime, name string, want map[string]string) float64 {
	t.Helper()
	for _, m := range metricsNamed(t, rt, name) {
		if hasLabels(m, want) {
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
