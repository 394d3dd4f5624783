package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/trace"
	"sync"
	"syscall"
)

// startExecTrace writes this process's execution trace to path until the
// returned stop is called or the process gets SIGTERM or SIGINT (the
// proxy mode runs until killed): the load generator's own side of a
// latency tail (its collections, its goroutines waiting for the core it
// shares with the fake backend), to set beside the router's
// (pitstop serve --exectrace).
func startExecTrace(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-exectrace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-exectrace: %w", err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { trace.Stop(); f.Close() }) }
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		stop()
		os.Exit(1)
	}()
	return stop, nil
}
