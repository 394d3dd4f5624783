package main

import (
	"fmt"
	"io"
	"math/rand/v2"
)

// causes is what of a window's measures count as hits, one letter each:
// M a mark phase, S a stop-the-world, A a mark assist, W a wait for the
// core, R a run holding it, Y a system call; "-" for none.
func (s seen) causes(waitMs, longMs float64) string {
	out := ""
	for _, c := range []struct {
		hit    bool
		letter string
	}{{s.mark > 0, "M"}, {s.stw > 0, "S"}, {s.assist > 0, "A"}, {s.wait >= waitMs, "W"}, {s.run >= longMs, "R"}, {s.syscall >= longMs, "Y"}} {
		if c.hit {
			out += c.letter
		}
	}
	if out == "" {
		return "-"
	}
	return out
}

// sides counts windows by which process's trace had a hit in them.
type sides struct{ n, routerOnly, loadOnly, both, neither int }

func (c *sides) add(router, load string) {
	c.n++
	switch {
	case router != "-" && load != "-":
		c.both++
	case router != "-":
		c.routerOnly++
	case load != "-":
		c.loadOnly++
	default:
		c.neither++
	}
}

func (c sides) String() string {
	pct := func(k int) string { return fmt.Sprintf("%5.1f%%", 100*float64(k)/float64(max(c.n, 1))) }
	return fmt.Sprintf("%s %s %s %s", pct(c.routerOnly), pct(c.loadOnly), pct(c.both), pct(c.neither))
}

// reportBoth sets the router's trace beside routerload's for the same
// calls: which side had something in each slow call's window, against
// random windows of the same lengths.
func reportBoth(w io.Writer, rtl, ltl *timeline, r run, waitMs, longMs float64) {
	fmt.Fprintf(w, "\nboth sides (M mark, S stop-the-world, A assist, W wait ≥ %.2f ms, R run ≥ %.2f ms, Y syscall ≥ %.2f ms):\n", waitMs, longMs, longMs)
	fmt.Fprintf(w, "%9s %7s  %-7s %-7s\n", "at_ms", "over", "router", "load")
	var slow, base sides
	var lengths []float64
	for _, c := range r.Slowest {
		win := window{c.AtMs, c.AtMs + c.InMs + c.OutMs}
		lengths = append(lengths, win.to-win.from)
		a, b := rtl.in(win).causes(waitMs, longMs), ltl.in(win).causes(waitMs, longMs)
		slow.add(a, b)
		fmt.Fprintf(w, "%9.1f %7.3f  %-7s %-7s\n", c.AtMs, c.OverMs, a, b)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		if len(lengths) == 0 {
			break
		}
		l := lengths[i%len(lengths)]
		at := rng.Float64() * (r.Seconds*1000 - l)
		win := window{at, at + l}
		base.add(rtl.in(win).causes(waitMs, longMs), ltl.in(win).causes(waitMs, longMs))
	}
	fmt.Fprintf(w, "\n%-34s %6s %6s %6s %6s\n", "share of windows with a hit in", "router", "load", "both", "neither")
	fmt.Fprintf(w, "%-34s %s\n", fmt.Sprintf("the %d slowest calls", slow.n), slow)
	fmt.Fprintf(w, "%-34s %s\n", fmt.Sprintf("%d random windows, same lengths", base.n), base)
}
