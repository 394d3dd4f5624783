package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

func TestProgressSilentOnNonTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, out := range map[string]interface{ Write([]byte) (int, error) }{"buffer": &bytes.Buffer{}, "file": f} {
		t.Run(name, func(t *testing.T) {
			p := NewProgress(100, "bench", out)
			if p.Enabled() {
				t.Error("enabled on a non-terminal")
			}
			for range 100 {
				p.Add(1)
			}
			p.Finish()
			if b, ok := out.(*bytes.Buffer); ok && b.Len() != 0 {
				t.Errorf("wrote %q", b.String())
			}
		})
	}
	if fi, _ := f.Stat(); fi.Size() != 0 {
		t.Errorf("wrote %d bytes to a file", fi.Size())
	}
	if p := NewProgress(10, "x", nil, ForceProgress()); p.Enabled() {
		t.Error("enabled with a nil writer")
	}
}

func TestProgressForced(t *testing.T) {
	tests := []struct {
		name  string
		total int64
	}{{"known total", 50}, {"unknown total", 0}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf testutil.LockedBuffer
			p := NewProgress(tc.total, "bench fcfs@2", &buf, ForceProgress(), ProgressThrottle(0))
			if !p.Enabled() {
				t.Fatal("forced bar not enabled")
			}
			for range 50 {
				p.Add(1)
			}
			p.Finish()
			p.Finish() // idempotent
			if !strings.Contains(buf.String(), "bench fcfs@2") {
				t.Errorf("bar output lacks description: %q", buf.String())
			}
		})
	}
}

func TestProgressNil(t *testing.T) {
	var p *Progress
	p.Add(1)
	p.Finish()
	if p.Enabled() {
		t.Error("nil progress enabled")
	}
}
