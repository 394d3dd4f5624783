// Command tracetail lines the slowest calls of a routerload overhead run
// (its -json) up with an execution trace of one process of that run
// (pitstop serve --exectrace, or routerload -exectrace for the client's
// and the fake backend's side) and says what the process was doing
// while each was in flight: a collection's mark phase or stop-the-world,
// a goroutine's mark assist, goroutines waiting for a core (runnable, not
// running), a goroutine holding the core long, a long system call. The
// same measures over random windows of the same lengths in the same run
// are the base rate: a cause is one the slow calls meet more often than
// chance.
//
//	tracetail -trace router.trace -json run.json [-load-trace run.load.trace]
//
// With -load-trace (routerload's trace of the same run) it also says, call
// by call, which process had something in the call's window: the router,
// the load generator, both or neither (then the time was outside both Go
// schedulers: the kernel, the sockets).
//
// It is its own module (golang.org/x/exp/trace parses the trace) so the
// project's go.mod does not carry a debugging tool's dependency.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

// run is the part of routerload's JSON result read here.
type run struct {
	StartUnixNano int64
	Seconds       float64
	LateShare     float64
	Slowest       []struct{ AtMs, OverMs, InMs, OutMs, LateMs float64 }
}

func main() {
	tracePath := flag.String("trace", "", "execution trace of the router (or of routerload)")
	loadPath := flag.String("load-trace", "", "optional: routerload's trace of the same run, set beside -trace's call by call")
	jsonPath := flag.String("json", "", "routerload's -json result of the same run")
	waitMs := flag.Float64("wait-ms", 0.5, "a goroutine runnable at least this long, not running, counts as waiting for a core")
	longMs := flag.Float64("long-ms", 0.5, "a goroutine running (or in a system call) at least this long without a break counts as holding the core")
	flag.Parse()
	if *tracePath == "" || *jsonPath == "" {
		fmt.Fprintln(os.Stderr, "usage: tracetail -trace FILE -json FILE [-load-trace FILE] [-wait-ms 0.5] [-long-ms 0.5]")
		os.Exit(2)
	}
	var r run
	data, err := os.ReadFile(*jsonPath)
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err == nil && r.StartUnixNano == 0 {
		err = fmt.Errorf("%s: no StartUnixNano (a routerload from before 2026-11-27 14:00 UTC)", *jsonPath)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracetail:", err)
		os.Exit(1)
	}
	f, err := os.Open(*tracePath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracetail:", err)
		os.Exit(1)
	}
	defer f.Close()
	tl, err := readTimeline(f, r.StartUnixNano)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracetail:", err)
		os.Exit(1)
	}
	report(os.Stdout, tl, r, *waitMs, *longMs)
	if *loadPath != "" {
		lf, err := os.Open(*loadPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tracetail:", err)
			os.Exit(1)
		}
		defer lf.Close()
		ltl, err := readTimeline(lf, r.StartUnixNano)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tracetail:", *loadPath+":", err)
			os.Exit(1)
		}
		reportBoth(os.Stdout, tl, ltl, r, *waitMs, *longMs)
	}
}
