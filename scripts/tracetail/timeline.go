package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/exp/trace"
)

// span is an interval of the run in ms after the load's start, with what
// it was: a goroutine's kind (its start function) or a range's name.
type span struct {
	from, to float64
	what     string
}

// timeline is what one process did during the run, in ms after the
// load's start.
type timeline struct {
	mark, stw, assist []span
	// waits: a goroutine runnable and not running (from: when it became
	// runnable, to: when it ran).
	waits []span
	// runs: a goroutine running without a break, every one (what held
	// the core in a window); syscalls: in a system call, those of at least
	// 0.1 ms.
	runs, syscalls []span
	end            float64 // the trace's last event
	// created: when each goroutine was created (ms) and its id, to count
	// them by start function once the names are known.
	created []span
}

// readTimeline reads a trace and places its events on the clock of a load
// that started at start (Unix ns), by the trace's first clock snapshot.
func readTimeline(r io.Reader, start int64) (*timeline, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	tl := &timeline{}
	var (
		snapped  bool
		snapT    trace.Time
		snapWall int64
		kind     = map[trace.GoID]string{}
		since    = map[trace.GoID]trace.Time{} // became runnable, began running, entered a syscall
		open     = map[string]trace.Time{}     // ranges begun, by name and scope
	)
	ms := func(t trace.Time) float64 {
		return float64(snapWall-start)/1e6 + float64(t.Sub(snapT))/1e6
	}
	name := func(g trace.GoID) string {
		if k, ok := kind[g]; ok {
			return k
		}
		return "?"
	}
	var pending []trace.Event // events before the first clock snapshot
	handle := func(e trace.Event) {
		t := e.Time()
		tl.end = max(tl.end, ms(t))
		switch e.Kind() {
		case trace.EventRangeBegin, trace.EventRangeActive:
			rg := e.Range()
			open[rg.Name+"/"+rg.Scope.String()] = t
		case trace.EventRangeEnd:
			rg := e.Range()
			key := rg.Name + "/" + rg.Scope.String()
			t0, ok := open[key]
			if !ok {
				return
			}
			delete(open, key)
			s := span{ms(t0), ms(t), rg.Name}
			switch {
			case rg.Name == "GC concurrent mark phase":
				tl.mark = append(tl.mark, s)
			case strings.HasPrefix(rg.Name, "stop-the-world"):
				tl.stw = append(tl.stw, s)
			case rg.Name == "GC mark assist":
				s.what = name(e.Goroutine())
				tl.assist = append(tl.assist, s)
			}
		case trace.EventStateTransition:
			st := e.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				return
			}
			g := st.Resource.Goroutine()
			from, to := st.Goroutine()
			// A goroutine is named by the deepest frame of the first stack
			// seen with frames: its creation's, or any later transition's.
			if k := kind[g]; k == "" || k == "?" {
				kind[g] = startFunc(st.Stack)
			}
			if from == trace.GoNotExist {
				tl.created = append(tl.created, span{ms(t), ms(t), string(rune(0)) + fmt.Sprint(g)})
			}
			if t0, ok := since[g]; ok {
				s := span{ms(t0), ms(t), name(g)}
				switch {
				case from == trace.GoRunnable && to == trace.GoRunning:
					tl.waits = append(tl.waits, s)
				case from == trace.GoRunning:
					tl.runs = append(tl.runs, span{s.from, s.to, string(rune(0)) + fmt.Sprint(g)})
				case from == trace.GoSyscall && s.to-s.from >= 0.1 && !idleSyscall[s.what]:
					tl.syscalls = append(tl.syscalls, s)
				}
			}
			delete(since, g)
			if to == trace.GoRunnable || to == trace.GoRunning || to == trace.GoSyscall {
				since[g] = t
			}
		}
	}
	for {
		e, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !snapped && e.Kind() == trace.EventSync {
			if cs := e.Sync().ClockSnapshot; cs != nil {
				snapped, snapT, snapWall = true, cs.Trace, cs.Wall.UnixNano()
				for _, p := range pending {
					handle(p)
				}
				pending = nil
			}
		}
		if !snapped {
			pending = append(pending, e)
			continue
		}
		handle(e)
	}
	if !snapped {
		return nil, fmt.Errorf("the trace has no clock snapshot (Go before 1.25)")
	}
	// Runs were keyed by goroutine id while names could still be learnt.
	for _, spans := range [][]span{tl.runs, tl.created} {
		for i := range spans {
			var g trace.GoID
			fmt.Sscan(spans[i].what[1:], &g)
			spans[i].what = name(g)
		}
	}
	return tl, nil
}

// idleSyscall are goroutines that wait in a blocking system call by
// design (a signal's arrival): long, and no cause of anyone's wait.
var idleSyscall = map[string]bool{"os/signal.loop": true}

// startFunc names a goroutine by the function it started in: the deepest
// frame of its creation's stack that is not the runtime's goexit.
func startFunc(s trace.Stack) string {
	last := "?"
	for f := range s.Frames() {
		if f.Func != "runtime.goexit" {
			last = f.Func
		}
	}
	return last
}
