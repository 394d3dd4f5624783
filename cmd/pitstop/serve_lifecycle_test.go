package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// drainRun is drainHTTP running on a loopback listener with a fake runtime
// whose close ends the handlers that wait for it.
type drainRun struct {
	addr     string
	signal   context.CancelFunc
	closed   chan struct{} // closed by the runtime's close
	closes   atomic.Int32
	returned chan error
}

func startDrain(t *testing.T, h http.Handler, timeout, grace time.Duration, closeErr error) *drainRun {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &drainRun{addr: ln.Addr().String(), signal: cancel, closed: make(chan struct{}), returned: make(chan error, 1)}
	closeRuntime := func() error {
		if d.closes.Add(1) == 1 {
			close(d.closed)
		}
		return closeErr
	}
	hs := &http.Server{Handler: h}
	go func() {
		d.returned <- drainHTTP(ctx, func() {}, hs, ln, closeRuntime, timeout, grace, slog.New(slog.DiscardHandler))
	}()
	return d
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return string(data), err
}

// TestDrainHTTP: at the signal a call that finishes within the timeout
// completes; at the timeout the runtime is closed, which ends the calls
// waiting for it; a handler blocked writing to a client that never reads
// is ended by closing its connection after the grace; drainHTTP returns
// nil and the port no longer accepts.
func TestDrainHTTP(t *testing.T) {
	var d *drainRun
	flood := make(chan error, 1)
	var written atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/quick", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(100 * time.Millisecond)
		fmt.Fprint(w, "done")
	})
	mux.HandleFunc("/call", func(w http.ResponseWriter, _ *http.Request) {
		<-d.closed
		fmt.Fprint(w, "ended by the runtime's close")
	})
	mux.HandleFunc("/flood", func(w http.ResponseWriter, _ *http.Request) {
		chunk := []byte(strings.Repeat("x", 64<<10))
		for {
			if _, err := w.Write(chunk); err != nil {
				flood <- err
				return
			}
			written.Add(int64(len(chunk)))
		}
	})
	const timeout, grace = 300 * time.Millisecond, 300 * time.Millisecond
	d = startDrain(t, mux, timeout, grace, nil)

	idle, err := dialTinyWindow(d.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := io.WriteString(idle, "GET /flood HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	call := make(chan string, 1)
	go func() { s, err := get("http://" + d.addr + "/call"); call <- fmt.Sprint(s, err) }()
	// The flood blocks once the socket buffers are full: its count stops.
	for last, deadline := int64(-1), time.Now().Add(10*time.Second); ; {
		time.Sleep(100 * time.Millisecond)
		n := written.Load()
		if n > 0 && n == last {
			break
		}
		select {
		case err := <-flood:
			t.Fatalf("the flood ended before the signal: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the flood's writes never blocked (%d bytes written)", n)
		}
		last = n
	}
	quick := make(chan string, 1)
	go func() { s, err := get("http://" + d.addr + "/quick"); quick <- fmt.Sprint(s, err) }()
	time.Sleep(20 * time.Millisecond) // /quick is in flight
	d.signal()

	select {
	case err := <-d.returned:
		if err != nil {
			t.Errorf("drainHTTP: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("drainHTTP did not return: the blocked writer held it")
	}
	if got := <-quick; got != "done<nil>" {
		t.Errorf("call finishing within the timeout: %q", got)
	}
	if got := <-call; got != "ended by the runtime's close<nil>" {
		t.Errorf("call ended at the timeout: %q", got)
	}
	select {
	case err := <-flood:
		if err == nil {
			t.Error("the blocked writer's write did not fail")
		}
	case <-time.After(5 * time.Second):
		t.Error("the blocked writer is still blocked: its connection was not closed")
	}
	if n := d.closes.Load(); n != 1 {
		t.Errorf("runtime closed %d times, want 1", n)
	}
	if c, err := net.DialTimeout("tcp", d.addr, time.Second); err == nil {
		c.Close()
		t.Error("the port still accepts after the shutdown")
	}
}

// TestDrainHTTPIdle: with nothing in flight the shutdown does not wait for
// the timeout, and a failure of the runtime's close is returned.
func TestDrainHTTPIdle(t *testing.T) {
	failed := errors.New("engine stopped: broken")
	d := startDrain(t, http.NotFoundHandler(), time.Hour, time.Hour, failed)
	if _, err := get("http://" + d.addr + "/"); err != nil {
		t.Fatal(err)
	}
	d.signal()
	select {
	case err := <-d.returned:
		if !errors.Is(err, failed) {
			t.Errorf("drainHTTP returned %v, want the runtime's failure", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("drainHTTP waited with nothing in flight")
	}
	if n := d.closes.Load(); n != 1 {
		t.Errorf("runtime closed %d times, want 1", n)
	}
}

// --read-timeout and --shutdown-grace refuse what is not a positive
// duration, as usage errors, before anything is loaded.
func TestServeLifecycleFlagsBadInput(t *testing.T) {
	cases := []struct{ args, want []string }{
		{[]string{"--read-timeout", "0"}, []string{`invalid argument "0" for "--read-timeout"`, "must be positive"}},
		{[]string{"--read-timeout", "-5s"}, []string{"--read-timeout", "must be positive"}},
		{[]string{"--shutdown-grace", "soon"}, []string{`"soon" for "--shutdown-grace"`, "not a duration"}},
	}
	for _, c := range cases {
		code, stdout, stderr := pitstop(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
		if code != 2 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line", c.args, code, stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, stderr, w)
			}
		}
	}
}
