package report

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress is a progress bar for a bench run. It renders only when its
// writer is a terminal (or when forced with ForceProgress); otherwise every
// method is a no-op, so CI logs stay clean. A nil *Progress is valid and
// does nothing. It is safe for concurrent use.
type Progress struct {
	bar *progressbar.ProgressBar
}

// ProgressOption changes how NewProgress builds its bar.
type ProgressOption func(*progressConfig)

type progressConfig struct {
	force    bool
	throttle time.Duration
}

// ForceProgress renders the bar even when the writer is not a terminal.
func ForceProgress() ProgressOption { return func(c *progressConfig) { c.force = true } }

// ProgressThrottle sets the minimum time between two renders (default 100ms).
func ProgressThrottle(d time.Duration) ProgressOption {
	return func(c *progressConfig) { c.throttle = d }
}

// NewProgress returns a bar counting up to total (≤ 0: unknown, a spinner)
// labelled desc, drawn on out. If out is nil or not a terminal and the bar
// is not forced, the Progress prints nothing.
func NewProgress(total int64, desc string, out io.Writer, opts ...ProgressOption) *Progress {
	cfg := progressConfig{throttle: 100 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	if out == nil || !(cfg.force || isTerminal(out)) {
		return &Progress{}
	}
	if total <= 0 {
		total = -1
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionThrottle(cfg.throttle),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionOnCompletion(func() { io.WriteString(out, "\n") }),
	)
	return &Progress{bar: bar}
}

// Enabled reports whether the bar renders anything.
func (p *Progress) Enabled() bool { return p != nil && p.bar != nil }

// Add advances the bar by n.
func (p *Progress) Add(n int64) {
	if p == nil || p.bar == nil {
		return
	}
	_ = p.bar.Add64(n)
}

// Finish fills the bar and ends its line. Later calls do nothing.
func (p *Progress) Finish() {
	if p == nil || p.bar == nil {
		return
	}
	if !p.bar.IsFinished() {
		_ = p.bar.Finish()
	}
}

// isTerminal reports whether w is a file descriptor attached to a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
