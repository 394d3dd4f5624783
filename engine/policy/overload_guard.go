package policy

// overloadGuard shuts the forecast lane while the system is past capacity
// (PitstopTail "...-forecast-fit-queue-guard" and the other "-guard"
// values): at each full re-rank it notes how many calls wait, and it calls
// the system overloaded while the least backlog of the last window is above
// the least backlog of the window before it: the queue no longer drains to
// the floor it reached a window ago. The window is the lane's own bar
// (arrival order's p99 end-to-end time, learned online): a stable queue,
// however bursty, serves every call within about that time, so its floor
// comes back within it; a queue whose arrivals outrun its service grows
// between every pair of windows and its floor rises. Until it holds two
// windows of notes the guard does not know, and the lane stays shut.
//
// Why: the lane reorders work. Below capacity that moves which calls wait,
// and the forecast gate opens it for the calls the burst will make late.
// Past capacity every waiting call is late; promoting the long waiting
// prompts and first calls of new programs ahead of the short calls raises
// everyone's wait and lowers the work done per second (react @12 with the
// honest reference: mean 72 → 316-320 s, 57 → 32 calls/s; azconv14 and
// gate14, docs/results-policies.md, session 14). The floor test reads no
// constant and nothing of the workload: only the policy's own queue and
// its own learned p99.
type overloadGuard struct {
	notes []backlogNote // oldest first, back to two windows before the last
	shut  bool          // the verdict at the last note
	// hold, when set (PitstopTail "...-guard-hold"), keeps the lane shut
	// from the first rise until the last window's floor is back at the
	// floor before it (until): an overload ends when its backlog has
	// drained, not when it stops growing.
	hold    bool
	episode bool
	until   int
	// known is whether the last verdict came from two windows of notes
	// and a known window (boostPast reads the guard's unknown as under
	// capacity; the lane reads it as shut).
	known bool
	// busy, when set (boostPast's "-past-busy"), counts a rise only from
	// a floor above zero: a queue that emptied in the window before drained
	// all it had within two windows, and its rise is a burst's start, not a
	// backlog outrunning service (azure-code @1's bursts, session 18).
	busy bool
}

// guardWindows is how many windows the floor is compared across: the
// last against the one before. Three (a floor rising twice in a row) was
// measured and keeps the lane open in the bursts that cost azure-code @1's
// mean (docs/results-policies.md, session 15).
const guardWindows = 2

// backlogNote is the number of calls waiting at a full re-rank.
type backlogNote struct {
	at      float64 // seconds
	waiting int
}

// note records the backlog a re-rank saw at time at and settles the
// verdict against the window (seconds; not positive: unknown, shut).
func (g *overloadGuard) note(at float64, waiting int, window float64) {
	g.notes = append(g.notes, backlogNote{at, waiting})
	g.known = false
	if !(window > 0) {
		g.shut = true
		return
	}
	k := guardWindows
	from := at - float64(k)*window
	drop := 0
	for drop+1 < len(g.notes) && g.notes[drop+1].at <= from {
		drop++ // keep one note at or before the first window's start
	}
	if drop > 0 {
		g.notes = append(g.notes[:0], g.notes[drop:]...)
	}
	if g.notes[0].at > from {
		g.shut = true // less than the windows seen
		return
	}
	g.known = true
	var floors [guardWindows]int // oldest window first; -1: no note
	for i := range floors {
		floors[i] = -1
	}
	for _, n := range g.notes {
		i := k - 1 - int((at-n.at)/window)
		floors[max(i, 0)] = minBacklog(floors[max(i, 0)], n.waiting)
	}
	rising := true
	for i := 1; i < k; i++ {
		if floors[i-1] < 0 || floors[i] <= floors[i-1] {
			rising = false
		}
	}
	if g.busy && floors[0] <= 0 {
		rising = false
	}
	switch {
	case !g.hold:
		g.shut = rising
	case g.episode && floors[k-1] <= g.until:
		g.episode = false // drained back to where it began
		g.shut = rising
	case g.episode:
		g.shut = true
	case rising:
		g.episode, g.until, g.shut = true, floors[0], true
	default:
		g.shut = false
	}
}

// minBacklog is the smaller of a floor (-1: none yet) and a backlog.
func minBacklog(floor, waiting int) int {
	if floor < 0 || waiting < floor {
		return waiting
	}
	return floor
}

// overloaded reports the last verdict: the backlog's floor is rising, or
// the guard has not seen enough to tell.
func (g *overloadGuard) overloaded() bool { return g.shut }
