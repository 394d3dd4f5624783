package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecTrace: --exectrace writes a Go execution trace that go tool trace
// reads (its header names the format), and a path that cannot be made is a
// one-line error naming the flag.
func TestExecTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.trace")
	stop, err := startExecTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("go 1.")) {
		t.Errorf("trace starts %q, not a Go execution trace", data[:min(len(data), 16)])
	}
	if _, err := startExecTrace(filepath.Join(t.TempDir(), "no", "such", "dir", "x.trace")); err == nil || !strings.HasPrefix(err.Error(), "--exectrace: ") {
		t.Errorf("bad path: %v", err)
	}
	none, err := startExecTrace("")
	if err != nil {
		t.Fatal(err)
	}
	none()
}
