package main

import (
	"context"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/api"
	"github.com/pitstop-llm/pitstop/runtime/remote"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// serve starts a pitstop server on a loopback port.
func serve(t *testing.T, cfg runtime.Config) string {
	t.Helper()
	cfg.Logger = quiet()
	rt, err := runtime.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Config{Runtime: rt, AllowToolRegistration: true, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); rt.Close() })
	return hs.URL
}

func newRouter(t *testing.T, urls ...string) string {
	t.Helper()
	specs, err := remote.ParseSpecs(urls)
	if err != nil {
		t.Fatal(err)
	}
	r, err := remote.New(remote.Config{HealthInterval: 200 * time.Millisecond, Logger: quiet()}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return serve(t, runtime.Config{Remote: r})
}

// TestRunChecks: a small load through a router over two scripted
// backends passes every check, and the checks see what happened.
func TestRunChecks(t *testing.T) {
	b1, b2 := serve(t, runtime.Config{}), serve(t, runtime.Config{})
	router := newRouter(t, b1+",kind=pitstop", b2+",kind=pitstop")
	res, err := run(context.Background(), config{router: router, backends: []string{b1, b2}, clients: 4, programs: 2, calls: 3, model: "pitstop-scripted-test"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ok() || res.Calls != 24 || res.ToolRuns != 24 || res.FollowUps != 16 {
		t.Errorf("result %+v", res)
	}
}

// TestOverhead: the overhead mode measures every call through a router
// in front of its fake backend.
func TestOverhead(t *testing.T) {
	addr, f := startFake(t)
	router := newRouter(t, "http://"+addr)
	waitUp(router)
	res, err := overhead(router, f, 200, 0.25, 0.1, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls != 50 || res.Failed != 0 || res.P50Ms <= 0 || res.P99Ms < res.P50Ms || res.P999Ms < res.P99Ms || res.MaxMs < res.P999Ms {
		t.Errorf("result %+v", res)
	}
	// The two ways of a call add up to the overhead; the router (in this
	// process) used some CPU.
	if res.InP50Ms <= 0 || res.OutP50Ms <= 0 || res.InP50Ms >= res.ClientP50Ms || res.RouterCPUPercent < 0 || res.RouterFaultsPerCall < 0 || res.AchievedRate <= 0 {
		t.Errorf("result %+v", res)
	}
	// The run-queue waits were read (the router is this process), and
	// the start is on the wall clock, before the calls' ends.
	if res.RouterRunQueueMs < 0 || res.LoadRunQueueMs < 0 || res.StartUnixNano <= 0 || res.StartUnixNano > time.Now().UnixNano() {
		t.Errorf("run queue %.3f / %.3f ms, start %d", res.RouterRunQueueMs, res.LoadRunQueueMs, res.StartUnixNano)
	}
	// The tail: the slowest 1% (one of 50 calls), whose overhead is the
	// maximum, sent within the run, in one window of 100 ms.
	if len(res.Slowest) != 1 || res.Slowest[0].OverMs != res.MaxMs || res.Slowest[0].AtMs < 0 || res.Slowest[0].AtMs > 250 || res.TailWindows != 1 {
		t.Errorf("tail %+v, %d windows (max %.3f ms)", res.Slowest, res.TailWindows, res.MaxMs)
	}
	direct, err := overhead("http://"+addr, f, 200, 0.25, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if direct.Failed != 0 || direct.P50Ms <= 0 || direct.RouterCPUPercent != -1 || direct.RouterFaultsPerCall != -1 || direct.RouterRunQueueMs != -1 {
		t.Errorf("direct result %+v", direct)
	}
}

// TestRunQueueWait: a process's threads' run-queue time is read and never
// decreases; no process is an error.
func TestRunQueueWait(t *testing.T) {
	a, err := runQueueWait(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	b, err := runQueueWait(os.Getpid())
	if err != nil || b < a {
		t.Errorf("run queue %d then %d ns, %v", a, b, err)
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		if _, err := runQueueWait(pid); err == nil {
			t.Errorf("pid %d: no error", pid)
		}
	}
}

// TestOverheadThroughProxy: the bare reverse proxy (-proxy) stands where
// the router stands and carries every call to the fake backend.
func TestOverheadThroughProxy(t *testing.T) {
	addr, f := startFake(t)
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pln.Close()
	go func() { _ = serveProxy(pln, "http://"+addr) }()
	proxy := "http://" + pln.Addr().String()
	waitUp(proxy)
	res, err := overhead(proxy, f, 200, 0.25, 0, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls != 50 || res.Failed != 0 || res.P50Ms <= 0 || res.InP50Ms <= 0 || res.OutP50Ms <= 0 {
		t.Errorf("result %+v", res)
	}
}

// startFake serves the overhead mode's fake backend on a free loopback
// port until the test ends.
func startFake(t *testing.T) (string, *fakeBackend) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f, stop, err := serveFake(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr, f
}
