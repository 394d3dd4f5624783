package main

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
)

// window is the part of a call's time a measure looks at.
type window struct{ from, to float64 }

// seen is what a process did in one window: the longest stretch of each
// kind of span overlapping it (ms of overlap) and what it was.
type seen struct {
	mark, stw, assist, wait, run, syscall float64
	waitWhat, runWhat, sysWhat            string
	// busy: the share of the window some goroutine ran; runners: how many
	// runs; top: the goroutine kind with the most run time in it.
	busy float64
	// stall: ms of the window in which a goroutine was runnable and none
	// ran: with one P (a pinned router), the process off its CPU (the
	// kernel's run queue) or the scheduler's own work.
	stall   float64
	runners int
	top     string
}

func overlap(s span, w window) float64 { return max(0, min(s.to, w.to)-max(s.from, w.from)) }

// longest is the largest overlap of any span with w, and its span's what.
func longest(spans []span, w window) (float64, string) {
	best, what := 0.0, ""
	for _, s := range spans {
		if o := overlap(s, w); o > best {
			best, what = o, s.what
		}
	}
	return best, what
}

func (tl *timeline) in(w window) seen {
	var s seen
	s.mark, _ = longest(tl.mark, w)
	for _, x := range tl.stw {
		s.stw += overlap(x, w)
	}
	s.assist, _ = longest(tl.assist, w)
	s.wait, s.waitWhat = longest(tl.waits, w)
	s.run, s.runWhat = longest(tl.runs, w)
	s.syscall, s.sysWhat = longest(tl.syscalls, w)
	by := map[string]float64{}
	for _, x := range tl.runs {
		if o := overlap(x, w); o > 0 {
			s.busy += o
			s.runners++
			by[x.what] += o
		}
	}
	s.stall = stalled(tl, w)
	if w.to > w.from {
		s.busy /= w.to - w.from
	}
	best := 0.0
	for k, v := range by {
		if v > best {
			best, s.top = v, fmt.Sprintf("%s %.2f", k, v)
		}
	}
	return s
}

// stalled is the time in w (10 µs steps) when some goroutine was
// runnable and none running.
func stalled(tl *timeline, w window) float64 {
	const step = 0.01
	n := int((w.to-w.from)/step) + 1
	waiting := make([]bool, n)
	running := make([]bool, n)
	mark := func(spans []span, into []bool) {
		for _, s := range spans {
			if overlap(s, w) <= 0 {
				continue
			}
			for i := max(0, int((s.from-w.from)/step)); i < n && w.from+float64(i)*step < s.to; i++ {
				into[i] = true
			}
		}
	}
	mark(tl.waits, waiting)
	mark(tl.runs, running)
	k := 0
	for i := range n {
		if waiting[i] && !running[i] {
			k++
		}
	}
	return float64(k) * step
}

// rates is how many of a set of windows met each measure.
type rates struct {
	n, mark, stw, assist, wait, run, syscall, any int
	busy, stall                                   float64 // summed
}

func (r *rates) add(s seen, waitMs, longMs float64) {
	r.n++
	r.busy += s.busy
	r.stall += s.stall
	hit := func(c *int, yes bool) bool {
		if yes {
			*c++
		}
		return yes
	}
	a := hit(&r.mark, s.mark > 0)
	b := hit(&r.stw, s.stw > 0)
	c := hit(&r.assist, s.assist > 0)
	d := hit(&r.wait, s.wait >= waitMs)
	e := hit(&r.run, s.run >= longMs)
	f := hit(&r.syscall, s.syscall >= longMs)
	if a || b || c || d || e || f {
		r.any++
	}
}

func (r rates) String() string {
	pct := func(k int) string { return fmt.Sprintf("%5.1f%%", 100*float64(k)/float64(max(r.n, 1))) }
	return fmt.Sprintf("%s %s %s %s %s %s %s %5.1f%% %6.3f", pct(r.mark), pct(r.stw), pct(r.assist), pct(r.wait), pct(r.run), pct(r.syscall), pct(r.any), 100*r.busy/float64(max(r.n, 1)), r.stall/float64(max(r.n, 1)))
}

func report(w io.Writer, tl *timeline, r run, waitMs, longMs float64) {
	load := window{0, r.Seconds * 1000}
	fmt.Fprintf(w, "trace covers %.0f ms of a %.0f ms load\n", tl.end, load.to)
	var markMs, stwMs, stwMax float64
	marks, stws := 0, 0
	for _, s := range tl.mark {
		if o := overlap(s, load); o > 0 {
			marks++
			markMs += o
		}
	}
	for _, s := range tl.stw {
		if o := overlap(s, load); o > 0 {
			stws++
			stwMs += o
			stwMax = max(stwMax, s.to-s.from)
		}
	}
	fmt.Fprintf(w, "collections in the load: %d mark phases, %.1f ms of mark (%.2f%% of the load); %d stop-the-worlds, %.2f ms in all, longest %.3f ms\n",
		marks, markMs, 100*markMs/load.to, stws, stwMs, stwMax)
	var waits []float64
	for _, s := range tl.waits {
		if overlap(s, load) > 0 {
			waits = append(waits, s.to-s.from)
		}
	}
	slices.Sort(waits)
	if n := len(waits); n > 0 {
		q := func(p float64) float64 { return waits[min(n-1, int(p*float64(n)))] }
		fmt.Fprintf(w, "runnable→running waits in the load: %d, p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms\n", n, q(0.5), q(0.99), q(0.999), waits[n-1])
	}
	top := func(title string, spans []span) {
		var in []span
		for _, s := range spans {
			if overlap(s, load) > 0 {
				in = append(in, s)
			}
		}
		slices.SortFunc(in, func(a, b span) int { return cmp.Compare(b.to-b.from, a.to-a.from) })
		fmt.Fprintf(w, "%s (longest 8 of %d):", title, len(in))
		for _, s := range in[:min(8, len(in))] {
			fmt.Fprintf(w, " %.2f@%.0f %s;", s.to-s.from, s.from, s.what)
		}
		fmt.Fprintln(w)
	}
	made := map[string]int{}
	for _, s := range tl.created {
		if overlap(span{s.from, s.from + 1e-9, ""}, load) > 0 {
			made[s.what]++
		}
	}
	kinds := make([]string, 0, len(made))
	for k := range made {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Compare(made[b], made[a]) })
	fmt.Fprintf(w, "goroutines created in the load, by start function:")
	for _, k := range kinds[:min(6, len(kinds))] {
		fmt.Fprintf(w, " %s %d;", k, made[k])
	}
	fmt.Fprintln(w)
	top("runs", tl.runs)
	top("syscalls", tl.syscalls)

	fmt.Fprintf(w, "\nslowest calls (window: sent → sent+in+out), what overlapped them (ms; wait ≥ %.2f, run/syscall ≥ %.2f count as hits):\n", waitMs, longMs)
	fmt.Fprintf(w, "%9s %6s %7s %6s %6s | %6s %6s %6s | %6s %-28s | %6s %-28s | %6s | %5s %6s %5s %s\n", "at_ms", "late", "over", "in", "out", "mark", "stw", "assist", "wait", "who", "run", "who", "sysc", "busy", "stall", "runs", "most run time")
	var slow rates
	late := 0
	for _, c := range r.Slowest {
		if c.LateMs >= waitMs {
			late++
		}
	}
	lengths := make([]float64, 0, len(r.Slowest))
	for _, c := range r.Slowest {
		win := window{c.AtMs, c.AtMs + c.InMs + c.OutMs}
		lengths = append(lengths, win.to-win.from)
		s := tl.in(win)
		slow.add(s, waitMs, longMs)
		fmt.Fprintf(w, "%9.1f %6.3f %7.3f %6.3f %6.3f | %6.3f %6.3f %6.3f | %6.3f %-28.28s | %6.3f %-28.28s | %6.3f | %4.0f%% %6.3f %5d %s\n",
			c.AtMs, c.LateMs, c.OverMs, c.InMs, c.OutMs, s.mark, s.stw, s.assist, s.wait, s.waitWhat, s.run, s.runWhat, s.syscall, 100*s.busy, s.stall, s.runners, s.top)
	}
	// The base rate: windows of the slow calls' lengths at random times of the load.
	var base rates
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 4000 {
		if len(lengths) == 0 {
			break
		}
		l := lengths[i%len(lengths)]
		at := rng.Float64() * (load.to - l)
		base.add(tl.in(window{at, at + l}), waitMs, longMs)
	}
	fmt.Fprintf(w, "\n%-34s %6s %6s %6s %6s %6s %6s %6s %6s %6s\n", "share of windows that met", "mark", "stw", "assist", "wait", "run", "sysc", "any", "busy", "stall")
	fmt.Fprintf(w, "%-34s %s\n", fmt.Sprintf("the %d slowest calls", slow.n), slow)
	fmt.Fprintf(w, "%-34s %s\n", fmt.Sprintf("%d random windows, same lengths", base.n), base)
	fmt.Fprintf(w, "of the slowest calls, %d were sent %.2f ms or more late, of all calls %.1f %% were 0.5 ms late (the generator held up; routerload's LateMs and LateShare, absent before 2026-11-27 14:30 UTC)\n", late, waitMs, 100*r.LateShare)
}
