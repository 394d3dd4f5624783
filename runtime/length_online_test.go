package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
)

// The runtime hands every finished segment to the online learner, which
// saves what it learnt under the state directory at Close; a restart picks
// it up.
func TestLengthLearnsOnlineAndPersists(t *testing.T) {
	if err := predictor.InitORT(); err != nil {
		t.Skipf("no ONNX Runtime (%v): export PITSTOP_ORT_LIB=$(scripts/fetch_ort.sh)", err)
	}
	dir := t.TempDir()
	l, err := LoadLength(LengthONNX)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.LearnOnline(dir, predictor.OnlineOptions{PublishEvery: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.LearnOnline(dir, predictor.OnlineOptions{}, nil); err == nil {
		t.Fatal("online learning turned on twice")
	}
	rt := newTestRuntime(t, Config{Length: l})
	const calls = 3
	for range calls {
		req := ChatRequest{Messages: []chat.Message{{Role: "user", Content: "What is (17+25)*3?"}}, Tools: []chat.Tool{calcTool}}
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
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

	again, err := LoadLength(LengthONNX)
	if err != nil {
		t.Fatal(err)
	}
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
