package runtime

import (
	"io"
	"log/slog"
	"sync"

	"github.com/pitstop-llm/pitstop/predictor"
)

// traceWriter appends the trace records of finished calls, one JSON object
// a line (the predictor's training data format).
type traceWriter struct {
	mu  sync.Mutex
	w   io.Writer
	log *slog.Logger
}

// write appends one call's records together.
func (t *traceWriter) write(recs []predictor.TraceRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range recs {
		if err := predictor.AppendTrace(t.w, r); err != nil {
			t.log.Warn("writing trace record", "err", err)
			return
		}
	}
}
