package main

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

// serveProc is a `pitstop serve` child process on a loopback port.
type serveProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	logs testutil.LockedBuffer
	done chan struct{}
	err  error // cmd.Wait's, once done is closed
}

// startServe starts `pitstop serve --addr ADDR args...` and waits until
// /healthz answers 200. The process is killed at the end of the test if it
// is still running.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return startServeWithin(t, 30*time.Second, args...)
}

// startServeWithin is startServe that waits up to healthy for /healthz
// (longer for a start that runs MCP servers).
func startServeWithin(t *testing.T, healthy time.Duration, args ...string) *serveProc {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProc{t: t, addr: ln.Addr().String(), done: make(chan struct{})}
	ln.Close()
	p.cmd = exec.Command(os.Args[0], append([]string{"serve", "--addr", p.addr}, args...)...)
	p.cmd.Env = append(os.Environ(), "PITSTOP_TEST_MAIN=1")
	p.cmd.Stderr = &p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	deadline := time.Now().Add(healthy)
	for {
		resp, err := http.Get(p.url("/healthz"))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("serve exited before it was healthy (%v); log:\n%s", p.err, p.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not healthy: %v; log:\n%s", err, p.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *serveProc) url(path string) string { return "http://" + p.addr + path }

// signal sends sig to the process.
func (p *serveProc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits up to within for the process to exit and returns its exit
// status; it fails the test if the process is still running then.
func (p *serveProc) wait(within time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("serve still running %v after the signal; log:\n%s", within, p.logs.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// status is a field of /proc/PID/status in bytes (VmHWM, VmRSS: kB there).
func (p *serveProc) status(field string) int64 {
	p.t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		p.t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				p.t.Fatalf("bad %s line %q", field, line)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				p.t.Fatalf("bad %s line %q: %v", field, line, err)
			}
			return kb << 10
		}
	}
	p.t.Fatalf("no %s in /proc/PID/status", field)
	return 0
}
