package runtime

import (
	"log/slog"
	"testing"

	"github.com/pitstop-llm/pitstop/predictor"
)

// BenchmarkChatLength is BenchmarkChat with the ONNX length model, without
// and with online learning: the difference is what learning adds to serving
// (queueing each finished segment; the learner runs on its own goroutine).
func BenchmarkChatLength(b *testing.B) {
	if err := predictor.InitORT(); err != nil {
		b.Skipf("no ONNX Runtime (%v)", err)
	}
	for _, learn := range []bool{false, true} {
		name := "onnx"
		if learn {
			name = "onnx+online"
		}
		b.Run(name, func(b *testing.B) {
			l, err := LoadLength(LengthONNX)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if learn {
				if err := l.LearnOnline("", predictor.OnlineOptions{}, nil); err != nil {
					b.Fatal(err)
				}
			}
			benchCalculatorChat(b, Config{Length: l})
		})
	}
}

// BenchmarkLengthObserve is the serving side of online learning per
// finished segment: the error metrics and, with learning, the hand-off.
func BenchmarkLengthObserve(b *testing.B) {
	rec := predictor.TraceRecord{Input: predictor.Input{LastMessage: "What is (17+25)*3?", PromptTokens: 200}, PreToolOutputTokens: 30, Tool: "calculator"}
	for _, learn := range []bool{false, true} {
		b.Run(map[bool]string{false: "metrics", true: "metrics+learner"}[learn], func(b *testing.B) {
			m := newMetrics()
			st := newLengthState(predictor.HistoryPredictor{Default: 10}, m, slog.New(slog.DiscardHandler))
			if learn {
				// A learner whose queue never drains: the hand-off's cost
				// alone (a full queue drops, as it would under overload).
				st.learner = &lengthLearner{queue: make(chan predictor.TraceRecord, onlineQueue), done: make(chan struct{})}
			}
			for b.Loop() {
				st.observe(25, rec)
			}
		})
	}
}
