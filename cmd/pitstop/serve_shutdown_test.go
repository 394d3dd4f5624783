package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// chatBody is a chat request for the scripted model.
func chatBody(stream bool, user string, tools string) string {
	b, _ := json.Marshal(user)
	extra := ""
	if tools != "" {
		extra = `,"tools":` + tools
	}
	return fmt.Sprintf(`{"model":"pitstop-scripted-test","stream":%t,"messages":[{"role":"user","content":%s}]%s}`, stream, b, extra)
}

// slowRead reads r a little at a time with pauses, as a client on a slow
// link does, and reports progress on the way.
func slowRead(r io.Reader, progress func(n int)) ([]byte, error) {
	var out bytes.Buffer
	buf := make([]byte, 512)
	for {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		progress(out.Len())
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return out.Bytes(), err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dialTinyWindow connects with a 4 KiB receive buffer, so that a server
// writing to a client that never reads blocks sooner (on loopback after
// about 2.8 MB here: the server's send buffer grows to take the rest).
func dialTinyWindow(addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return d.Dial("tcp", addr)
}

// TestServeShutdown stops a busy server with SIGTERM and a short
// --shutdown-timeout: it stops accepting at once; a call that finishes
// within the timeout completes normally; at the timeout a slow reader's
// stream ends with an error event and [DONE] (a clean end, not a cut
// connection), a non-stream call gets 503 server_shutting_down, a client
// that never reads has its connection closed; the process saves
// --durations and exits 0. (TestDrainHTTP has a client whose unread
// answer blocks the server's writes: too many bytes for this paced model.)
func TestServeShutdown(t *testing.T) {
	durations := filepath.Join(t.TempDir(), "durations.json")
	p := startServe(t, "--model", "scripted-test", "--predictor", "history",
		"--shutdown-timeout", "2s", "--shutdown-grace", "1s", "--durations", durations)

	// A server-side tool call, so that there are statistics to save.
	calc := `[{"type":"function","function":{"name":"calculator","parameters":{"type":"object","properties":{"expression":{"type":"string"}}}}}]`
	resp, err := http.Post(p.url("/v1/chat/completions"), "application/json", strings.NewReader(chatBody(false, "What is 2+3?", calc)))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), "calculator") {
		t.Fatalf("tool call: status %d, %.300s", resp.StatusCode, data)
	}

	// A client that sends a stream request and never reads the answer.
	idle, err := dialTinyWindow(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	body := chatBody(true, "/long 100000", "")
	if _, err := fmt.Fprintf(idle, "POST /v1/chat/completions HTTP/1.1\r\nHost: pitstop\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatal(err)
	}

	type answer struct {
		status int
		body   []byte
		err    error
	}
	post := func(body string, into chan<- answer) {
		resp, err := http.Post(p.url("/v1/chat/completions"), "application/json", strings.NewReader(body))
		if err != nil {
			into <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		into <- answer{status: resp.StatusCode, body: data, err: err}
	}

	// The slow reader's stream and a long non-stream call, both far longer
	// than the shutdown timeout.
	streaming := make(chan struct{})
	var once sync.Once
	slow := make(chan answer, 1)
	go func() {
		resp, err := http.Post(p.url("/v1/chat/completions"), "application/json", strings.NewReader(chatBody(true, "/long 3000", "")))
		if err != nil {
			slow <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		data, err := slowRead(resp.Body, func(n int) {
			if n > 2048 {
				once.Do(func() { close(streaming) })
			}
		})
		slow <- answer{status: resp.StatusCode, body: data, err: err}
	}()
	long := make(chan answer, 1)
	go post(chatBody(false, "/long 3000", ""), long)
	select {
	case <-streaming:
	case <-time.After(10 * time.Second):
		t.Fatalf("the stream did not start; log:\n%s", p.logs.String())
	}
	// A short call (well under a second), in flight at the signal.
	short := make(chan answer, 1)
	go post(chatBody(false, "/long 30", ""), short)
	time.Sleep(100 * time.Millisecond)

	p.signal(syscall.SIGTERM)
	refused := false
	for deadline := time.Now().Add(time.Second); !refused && time.Now().Before(deadline); {
		c, err := net.DialTimeout("tcp", p.addr, 100*time.Millisecond)
		if err != nil {
			refused = true
			break
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-p.done:
		t.Error("the process exited before its calls in flight were ended")
	default:
	}
	if !refused {
		t.Error("new connections still accepted 1 s after SIGTERM")
	}

	if code := p.wait(10 * time.Second); code != 0 {
		t.Errorf("exit status %d, want 0; log:\n%s", code, p.logs.String())
	}

	if a := <-short; a.err != nil || a.status != http.StatusOK || !strings.Contains(string(a.body), `"finish_reason":"stop"`) {
		t.Errorf("call that finished within the timeout: status %d, err %v, %.300s", a.status, a.err, a.body)
	}
	if a := <-long; a.err != nil || a.status != http.StatusServiceUnavailable || !strings.Contains(string(a.body), `"code":"server_shutting_down"`) {
		t.Errorf("non-stream call at the timeout: status %d, err %v, %.300s", a.status, a.err, a.body)
	}
	a := <-slow
	if a.err != nil {
		t.Errorf("the slow reader's stream did not end cleanly: %v", a.err)
	}
	var events []string
	for _, line := range strings.Split(string(a.body), "\n") {
		if ev, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, ev)
		}
	}
	if n := len(events); n < 3 || events[n-1] != "[DONE]" || !strings.Contains(events[n-2], `"code":"server_shutting_down"`) ||
		!strings.HasPrefix(events[n-2], `{"error":`) {
		t.Errorf("the slow reader's stream does not end with an error event and [DONE]: %d events, last %q", n, events[max(n-2, 0):])
	}

	// The client that had not read anything finds its whole answer, ended
	// the same way, then the connection's end.
	_ = idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	raw, err := io.ReadAll(idle)
	if err != nil || !strings.Contains(string(raw), `"code":"server_shutting_down"`) || !strings.Contains(string(raw), "data: [DONE]") {
		t.Errorf("the idle client's answer: err %v, ends %q", err, raw[max(len(raw)-300, 0):])
	}

	saved, err := os.ReadFile(durations)
	if err != nil || !strings.Contains(string(saved), "calculator") {
		t.Errorf("--durations not saved at exit: %v, %.300s", err, saved)
	}
}
