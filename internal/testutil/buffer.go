package testutil

import (
	"bytes"
	"strings"
	"sync"
	"time"
)

// LockedBuffer is a bytes.Buffer that goroutines (a logger, a process's
// output copier) write while the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// WaitLines waits up to within for n lines to be written and returns what
// was written by then (fewer lines when the time ran out: the caller's
// assertions say what was missing).
func (b *LockedBuffer) WaitLines(n int, within time.Duration) string {
	deadline := time.Now().Add(within)
	for {
		s := b.String()
		if strings.Count(s, "\n") >= n || time.Now().After(deadline) {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
}
