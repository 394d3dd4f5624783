package testutil

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// EndingReader hands its last bytes with io.EOF, not in a read of their
// own: what the router's stream reader must handle.
func TestEndingReader(t *testing.T) {
	e := &EndingReader{}
	e.Reset("abcdef")
	p := make([]byte, 4)
	if n, err := e.Read(p); n != 4 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	if n, err := e.Read(p); n != 2 || err != io.EOF || string(p[:n]) != "ef" {
		t.Fatalf("last read: %d %q, %v; want 2 \"ef\", EOF", n, p[:n], err)
	}
}

func TestCannedTransport(t *testing.T) {
	for path, want := range map[string]string{"/v1/models": `{"data":[{"id":"m"}]}`, "/v1/chat/completions": CannedReply} {
		req := httptest.NewRequest(http.MethodPost, "http://b"+path, strings.NewReader("{}"))
		resp, err := CannedTransport{}.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || string(body) != want {
			t.Errorf("%s: %q, %v; want %q", path, body, err, want)
		}
	}
}

// CountingServer counts connections, not requests: two requests on one
// kept connection are one, a closed one makes the next a second.
func TestCountingServer(t *testing.T) {
	s, conns := CountingServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }, nil)
	get := func(close bool) {
		req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
		req.Close = close
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get(false)
	get(true)
	get(false)
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

func TestLockedBuffer(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 400 {
		t.Fatalf("%d bytes, want 400", n)
	}
}

func TestValidateJSON(t *testing.T) {
	v := SchemaValidator(t, `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	if err := ValidateJSON(v, `{"n":1}`); err != nil {
		t.Errorf("valid: %v", err)
	}
	for _, bad := range []string{`{"n":"1"}`, `{}`, `{"n":`} {
		if ValidateJSON(v, bad) == nil {
			t.Errorf("%s validated", bad)
		}
	}
}

// WaitLines returns once n lines are written, and at the deadline with
// what was written when they are not.
func TestWaitLines(t *testing.T) {
	var b LockedBuffer
	go func() {
		for range 3 {
			time.Sleep(5 * time.Millisecond)
			b.Write([]byte("x\n"))
		}
	}()
	if got := b.WaitLines(3, 5*time.Second); strings.Count(got, "\n") != 3 {
		t.Fatalf("WaitLines(3) = %q, want 3 lines", got)
	}
	start := time.Now()
	if got := b.WaitLines(4, 50*time.Millisecond); strings.Count(got, "\n") != 3 || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("WaitLines(4) = %q after %v, want the 3 lines at the deadline", got, time.Since(start))
	}
}
