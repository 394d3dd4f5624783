package api

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/runtime"
)

// sendPaced writes head, then body in pieces of size every interval, while
// reading the answer; it returns the answer (all the server sent) once the
// server ends the connection, or "(still open)" after giveUp.
func sendPaced(t *testing.T, addr, head, body string, size int, interval, giveUp time.Duration) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	answer := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(bufio.NewReader(conn)) // EOF or a reset: the end either way
		answer <- string(data)
	}()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	stop := time.After(giveUp)
	for sent := 0; sent < len(body); sent += size {
		if _, err := io.WriteString(conn, body[sent:min(sent+size, len(body))]); err != nil {
			break // the server closed: the answer is in
		}
		select {
		case a := <-answer:
			return a
		case <-stop:
			return "(still open)"
		case <-time.After(interval):
		}
	}
	select {
	case a := <-answer:
		return a
	case <-stop:
		return "(still open)"
	}
}

func postHead(path string, length int, extra string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: pitstop\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n", path, extra, length)
}

// A body that pauses longer than the read timeout, and one that never
// pauses that long but trickles in far below the minimum rate, both get
// 408 request_timeout and the connection closed.
func TestBodyReadTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := newTestServer(t, serverOpts{api: Config{BodyReadTimeout: timeout}})
	addr := strings.TrimPrefix(ts.http.URL, "http://")
	body := `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name     string
		size     int
		interval time.Duration
	}{
		{"pause", 20, time.Hour},    // 20 bytes, then nothing
		{"trickle", 1, timeout / 3}, // a byte every 100 ms: never a pause of the timeout, far under 16 KiB/s
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			a := sendPaced(t, addr, postHead("/v1/chat/completions", len(body), ""), body, c.size, c.interval, 10*time.Second)
			took := time.Since(start)
			if !strings.HasPrefix(a, "HTTP/1.1 408 ") || !strings.Contains(a, `"code":"request_timeout"`) || !strings.Contains(a, `"type":"invalid_request_error"`) {
				t.Fatalf("after %v: answer %q, want 408 request_timeout", took, a)
			}
			if took < timeout {
				t.Errorf("answered after %v, before the timeout %v", took, timeout)
			}
			t.Logf("408 after %v", took.Round(time.Millisecond))
		})
	}
	serving(t, ts)
}

// A large body sent steadily (pieces every 50 ms, each pause well under the
// timeout, the rate well over the minimum) takes several timeouts in all
// and is read and answered normally: the deadline is on the pauses and the
// rate, not on the whole body.
func TestBodySteadyUpload(t *testing.T) {
	const timeout = 200 * time.Millisecond
	ts := newTestServer(t, serverOpts{api: Config{BodyReadTimeout: timeout}})
	addr := strings.TrimPrefix(ts.http.URL, "http://")
	body := `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"/say received"}]` + strings.Repeat(" ", 1<<20) + "}"
	start := time.Now()
	a := sendPaced(t, addr, postHead("/v1/chat/completions", len(body), "Connection: close\r\n"), body, 64<<10, 50*time.Millisecond, 30*time.Second)
	if !strings.HasPrefix(a, "HTTP/1.1 200 ") || !strings.Contains(a, "received") {
		t.Fatalf("answer %.400q", a)
	}
	if took := time.Since(start); took < 3*timeout {
		t.Errorf("the upload took %v: not longer than the timeout, the test proves nothing", took)
	}
}

// A stream that lasts many read timeouts after its body was read is not
// cut by the body's deadline.
func TestBodyDeadlineSparesStreams(t *testing.T) {
	const timeout = 100 * time.Millisecond
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Pace: 0.5}, api: Config{BodyReadTimeout: timeout}})
	guarded := httptest.NewServer(GuardBodies(ts.srv.Handler(), timeout))
	defer guarded.Close()
	for _, url := range []string{ts.http.URL, guarded.URL} {
		start := time.Now()
		resp, err := http.Post(url+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"pitstop-scripted-test","stream":true,"messages":[{"role":"user","content":"/long 60"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if err != nil || !strings.Contains(string(data), `"finish_reason":"stop"`) || !strings.HasSuffix(string(data), "data: [DONE]\n\n") {
			t.Fatalf("stream after %v: err %v, ends %q", took, err, data[max(len(data)-200, 0):])
		}
		if took < 3*timeout {
			t.Errorf("the stream took %v: not longer than the timeout, the test proves nothing", took)
		}
	}
}

// GuardBodies bounds a body that no handler reads: a request that fails
// authentication while its body trickles in is answered and its
// connection closed once the deadline passes, not when the body ends.
func TestGuardBodiesUnreadBody(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := newTestServer(t, serverOpts{api: Config{APIKeys: []string{"k1"}, BodyReadTimeout: timeout}})
	guarded := httptest.NewServer(GuardBodies(ts.srv.Handler(), timeout))
	defer guarded.Close()
	body := strings.Repeat(" ", 1000)
	start := time.Now()
	a := sendPaced(t, strings.TrimPrefix(guarded.URL, "http://"), postHead("/v1/chat/completions", len(body), ""), body, 1, 50*time.Millisecond, 10*time.Second)
	if !strings.HasPrefix(a, "HTTP/1.1 401 ") {
		t.Fatalf("after %v: answer %.300q, want 401 and the connection closed", time.Since(start), a)
	}
	t.Logf("401 and closed after %v (the body would have taken 50 s)", time.Since(start).Round(time.Millisecond))
}
