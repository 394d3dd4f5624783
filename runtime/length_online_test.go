package runtime

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
)

// The runtime hands every finished segment to the online learner, which
// saves what it learnt under the state directory at Close; a restart picks
// it up.
func TestLengthLearnsOnlineAndPersists(t *testing.T) {
	needORT(t)
	dir := t.TempDir()
	l := onnxLength(t)
	if err := l.LearnOnline(dir, predictor.OnlineOptions{PublishEvery: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.LearnOnline(dir, predictor.OnlineOptions{}, nil); err == nil {
		t.Fatal("online learning turned on twice")
	}
	rt := newTestRuntime(t, Config{Length: l})
	const calls = 3
	askCalc(t, rt, make([]string, calls)...) // no program: each call alone
	segments := 0
	for _, m := range metricsNamed(t, rt, "pitstop_predictor_length_error_tokens") {
		segments += int(m.GetHistogram().GetSampleCount())
	}
	if segments < calls {
		t.Fatalf("%d segments booked for %d calls", segments, calls)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if seen := l.Online().Stats().Seen; seen != segments {
		t.Fatalf("the learner learnt from %d segments, the runtime finished %d", seen, segments)
	}
	if _, err := os.Stat(filepath.Join(dir, predictor.OnlineStateFile)); err != nil {
		t.Fatalf("no state saved at Close: %v", err)
	}

	again := onnxLength(t)
	defer again.Close()
	if err := again.LearnOnline(dir, predictor.OnlineOptions{PublishEvery: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if seen := again.Online().Stats().Seen; seen != segments {
		t.Fatalf("after a restart the learner has seen %d segments, want the %d saved", seen, segments)
	}
}

func TestLearnOnlineNeedsTheONNXModel(t *testing.T) {
	l, err := LoadLength(LengthHistory)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.LearnOnline("", predictor.OnlineOptions{}, nil); err == nil {
		t.Fatal("the history predictor accepted online learning")
	}
}

// mixPredictions are the expert mixture's predictions over a grid of model
// outputs, for a program's first segment and a later one.
func mixPredictions(t *testing.T, l *Length) []int {
	t.Helper()
	_, probs := l.model.PredictLength(predictor.Input{LastMessage: "What is (17+25)*3?", ToolNames: []string{calcTool.Name}})
	later := predictor.ProgramBlend{}.Observe(30, 60, calcTool.Name)
	var out []int
	for _, model := range []int{5, 41, 90, 300} {
		for _, b := range []predictor.ProgramBlend{{}, later} {
			n, _, _ := l.expertMix().Predict(b, model, probs, l.model.OverflowTokens())
			m, _, _ := l.expertMix().Predict(b, model, nil, 0)
			out = append(out, n, m)
		}
	}
	return out
}

// The expert mixture's sums are saved beside the learnt model: a restarted
// serve predicts as the one before the restart did, where a fresh one does
// not.
func TestRestartedServePredictsAsBefore(t *testing.T) {
	needORT(t)
	dir := t.TempDir()
	l := onnxLength(t)
	if err := l.LearnOnline(dir, predictor.OnlineOptions{PublishEvery: 1}, nil); err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, Config{Length: l})
	askCalc(t, rt, "a", "b", "c")
	if rt.length.mix != l.mix {
		t.Fatal("the runtime predicts with another mixture than the one LearnOnline saves")
	}
	before := mixPredictions(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, predictor.ExpertMixStateFile)); err != nil {
		t.Fatalf("no mixture state saved at Close: %v", err)
	}

	fresh := onnxLength(t)
	defer fresh.Close()
	if got := mixPredictions(t, fresh); slices.Equal(got, before) {
		t.Fatalf("a fresh mixture predicts %v as the learnt one did: the test cannot tell a restore from none", got)
	}
	again := onnxLength(t)
	defer again.Close()
	if err := again.LearnOnline(dir, predictor.OnlineOptions{PublishEvery: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if got := mixPredictions(t, again); !slices.Equal(got, before) {
		t.Fatalf("after a restart the mixture predicts %v, before it %v", got, before)
	}
	if rt2 := newTestRuntime(t, Config{Length: again}); rt2.length.mix != again.mix {
		t.Fatal("the restarted runtime predicts with another mixture than the restored one")
	}
}

// A corrupt mixture file is a warning and a fresh mixture, never a failure
// to serve; the next save replaces it.
func TestCorruptMixtureStateStartsFresh(t *testing.T) {
	needORT(t)
	dir := t.TempDir()
	path := filepath.Join(dir, predictor.ExpertMixStateFile)
	if err := os.WriteFile(path, []byte(`{"kind":"something else"`), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	l := onnxLength(t)
	if err := l.LearnOnline(dir, predictor.OnlineOptions{}, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatalf("a corrupt mixture file stopped online learning: %v", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "expert mixture afresh") {
		t.Fatalf("no warning logged for the corrupt file:\n%s", logs.String())
	}
	fresh := onnxLength(t)
	defer fresh.Close()
	if got, want := mixPredictions(t, l), mixPredictions(t, fresh); !slices.Equal(got, want) {
		t.Fatalf("after a corrupt file the mixture predicts %v, a fresh one %v", got, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := predictor.OrderScored(predictor.TrainMedian(fresh.model.Info())).Restore(dir); err != nil {
		t.Fatalf("the corrupt file was not replaced at Close: %v", err)
	}
}

// Without online learning the state directory still keeps the mixture:
// restored at start, saved at Close.
func TestMixtureKeptWithoutLearning(t *testing.T) {
	needORT(t)
	dir := t.TempDir()
	l := onnxLength(t)
	if err := l.KeepMixture(dir, nil); err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, Config{Length: l})
	askCalc(t, rt, "a", "b", "c")
	before := mixPredictions(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, predictor.OnlineStateFile)); err == nil {
		t.Fatal("a learnt model was saved without learning")
	}
	again := onnxLength(t)
	defer again.Close()
	if err := again.KeepMixture(dir, nil); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(mixPredictions(t, &Length{model: again.model}), before) {
		t.Fatal("a fresh mixture predicts as the learnt one did: the test cannot tell a restore from none")
	}
	if got := mixPredictions(t, again); !slices.Equal(got, before) {
		t.Fatalf("after a restart the mixture predicts %v, before it %v", got, before)
	}
	hist, err := LoadLength(LengthHistory)
	if err != nil {
		t.Fatal(err)
	}
	if err := hist.KeepMixture(dir, nil); err == nil {
		t.Fatal("the history predictor, which has no mixture, accepted a state directory for one")
	}
}

// needORT skips t when ONNX Runtime cannot be loaded.
func needORT(t *testing.T) {
	t.Helper()
	if err := predictor.InitORT(); err != nil {
		t.Skipf("no ONNX Runtime (%v): export PITSTOP_ORT_LIB=$(scripts/fetch_ort.sh)", err)
	}
}

// onnxLength loads the shipped ONNX length model; the caller closes it.
func onnxLength(t *testing.T) *Length {
	t.Helper()
	l, err := LoadLength(LengthONNX)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// askCalc runs one calculator call per program through rt.
func askCalc(t *testing.T, rt *Runtime, programs ...string) {
	t.Helper()
	for _, p := range programs {
		req := ChatRequest{Program: p, Messages: []chat.Message{{Role: "user", Content: "What is (17+25)*3?"}}, Tools: []chat.Tool{calcTool}}
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
}
