package predictor

import "slices"

// A program's own lengths of one kind of turn are often closer to one
// another than any cross-program distribution says: on ToolBench's search
// trees the densest ±5-token window of the program's earlier turns of the
// same kind (retry or continuation) after the same tool, learnt online,
// puts 28.8% of the second half within ±5 tokens against the served
// mixture's 16.9% (docs/results-predictor.md, session 17). ProgramBlend
// keeps those lengths, and ServedStep offers the window's centre to the
// deployment's hit trade as a second candidate beside the mixture's own
// densest window (servedTrade), so the same rules decide whether it is
// served: per segment, the hits it adds must be worth the absolute error
// it adds (on the program's lengths, windowTrade), and per deployment,
// its realized hits must have paid for its realized error (HitTrade).

// programWindowKeep is how many of a class's latest lengths a program
// keeps for its window: a memory bound (8 bytes a length, copied when the
// class grows, as ProgramBlend is a value), not a tuned value; no class of
// the shipped search trees holds more.
const programWindowKeep = 64

// programLengths are a program's latest lengths of one kind (retry or
// continuation) after one last tool.
type programLengths struct {
	retry   bool
	tool    string
	lengths []int // oldest first, at most programWindowKeep; shared between copies, never written in place
}

// observeWindow returns ws with actual booked in the class of a segment
// of kind retry after tool, copying what it changes (ProgramBlend is a
// value: an earlier copy keeps seeing its own lengths).
func observeWindow(ws []programLengths, retry bool, tool string, actual int) []programLengths {
	i := slices.IndexFunc(ws, func(w programLengths) bool { return w.retry == retry && w.tool == tool })
	ws = slices.Clone(ws)
	if i < 0 {
		ws = append(ws, programLengths{retry: retry, tool: tool})
		i = len(ws) - 1
	}
	old := ws[i].lengths
	if len(old) >= programWindowKeep {
		old = old[len(old)-programWindowKeep+1:]
	}
	ws[i].lengths = append(slices.Clip(old), actual)
	return ws
}

// programCandidate is the point the program's own window offers for
// the next segment, whose mixture's median is median: the centre of the
// densest ±5-token window of the program's lengths in the finest class of
// the segment that has any (its kind, retry or continuation, after the
// same last tool; else its kind; else the whole program), where, over
// those lengths, the hits it adds are at least hitTradeRate × the absolute
// error it adds (the per-segment half of the trade, as tradeCandidate
// reads it on the mixture's distribution, here read on the evidence the
// window comes from); else median, as before the program's first segment.
func (b ProgramBlend) programCandidate(median int) int {
	var kind, all []int
	for _, w := range b.windows {
		if w.retry == b.retrying && w.tool == b.reads {
			return windowTrade(w.lengths, median)
		}
		if w.retry == b.retrying {
			kind = append(kind, w.lengths...)
		}
		all = append(all, w.lengths...)
	}
	switch {
	case len(kind) > 0:
		return windowTrade(kind, median)
	case len(all) > 0:
		return windowTrade(all, median)
	}
	return median
}

// windowTrade is the densest window's centre of xs when, over xs, it adds
// at least hitTradeRate hits per token of absolute error it adds over
// median, else median.
func windowTrade(xs []int, median int) int {
	c := densestCentre(xs)
	var hits, absErr float64
	for _, x := range xs {
		if abs(x-c) <= acc5HalfWidth {
			hits++
		}
		if abs(x-median) <= acc5HalfWidth {
			hits--
		}
		absErr += float64(abs(x-c) - abs(x-median))
	}
	if hits >= hitTradeRate*absErr {
		return c
	}
	return median
}

// densestCentre is the centre of the 11-token window that holds the most
// of xs (at least one): the midpoint of the lowest and highest length it
// holds, so that every one of them is within ±5 of it and a repeated
// length is predicted exactly. Of equally dense windows, the one whose
// centre is nearest xs' median (the lower on a tie) wins.
func densestCentre(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[(len(s)-1)/2]
	best, top, j := 0, 0, 0
	for i := range s {
		for j < len(s) && s[j]-s[i] <= 2*acc5HalfWidth {
			j++
		}
		c := (s[i] + s[j-1]) / 2
		if n := j - i; n > top || n == top && abs(c-med) < abs(best-med) {
			best, top = c, n
		}
	}
	return best
}
