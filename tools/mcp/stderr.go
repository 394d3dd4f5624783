package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Bounds of what is kept of a stdio server's stderr.
const (
	stderrMaxLine   = 1024 // longer lines are cut
	stderrTailLines = 5    // lines quoted in connection errors
)

// stderrLog is a stdio server's stderr: each line goes to the log, and the
// last few are kept to explain a failed start or an exit.
type stderrLog struct {
	log     *slog.Logger
	mu      sync.Mutex
	partial []byte
	last    []string
}

func newStderrLog(log *slog.Logger) *stderrLog { return &stderrLog{log: log} }

// Write logs the complete lines of p; it never fails.
func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > stderrMaxLine {
		w.line(string(w.partial))
		w.partial = w.partial[:0]
	}
	return len(p), nil
}

func (w *stderrLog) line(s string) {
	s = strings.TrimRight(strings.ToValidUTF8(s, "\uFFFD"), "\r")
	if len(s) > stderrMaxLine {
		s = strings.ToValidUTF8(s[:stderrMaxLine], "") + "…"
	}
	if s == "" {
		return
	}
	w.log.Info("MCP server stderr", "line", s)
	w.last = append(w.last, s)
	if len(w.last) > stderrTailLines {
		w.last = w.last[len(w.last)-stderrTailLines:]
	}
}

// tail is "; stderr: ..." with the last lines, or "" (also for nil, an
// HTTP server).
func (w *stderrLog) tail() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.last) == 0 {
		return ""
	}
	return "; stderr: " + strings.Join(w.last, " | ")
}
