package policy

import (
	"math"
	"slices"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// programModel learns, from the programs that completed, how much work a
// program still has given the service it has attained: the mean residual
// E[S − a | S > a] of the distribution of programs' total critical-path
// service S (ATLAS's measure), times the average context a second of service
// holds, so it is in the memory-over-time unit (token·seconds).
//
// It generalises ATLAS's least-attained-service order, which assumes that a
// program that has run long will run longer (true when program sizes are
// heavy-tailed, as chat sessions are): with homogeneous programs (tree
// searches of similar size) the residual shrinks as a program advances, and
// ranking by it finishes programs in a steady order instead of sharing the
// engine between all of them. A program counts as complete once it has had
// no call in the engine for `idle` (longer than any think time between its
// calls); its row is then dropped and its service becomes a sample.
type programModel struct {
	idle     time.Duration
	minN     int
	samples  []float64 // ring of completed programs' service, seconds
	next     int
	fresh    int       // samples since the last rebuild
	sorted   []float64 // samples, ascending
	suffix   []float64 // suffix[i] = Σ sorted[i:]
	cv       float64   // coefficient of variation of the samples
	ctxSvc   float64   // Σ service × mean context of finished calls
	svc      float64   // Σ service of finished calls
	gittins  gittinsTable
	rest     restIndex
	started  bool    // startedFirst at the last rebuild (gittins_started.go)
	programs float64 // completed programs counted in calls
	calls    float64 // their calls
	// atLeast[k] is how many completed programs made at least k calls,
	// liveAtLeast[k] how many programs not yet completed have made at
	// least k so far (index 0 unused), for nextCall.
	atLeast, liveAtLeast []float64
	// censored: the Kaplan–Meier estimate over completed and live programs
	// is rebuilt at every sweep ("gittins-censored", gittins_censored.go).
	censored         bool
	km               kmService
	kmEvents, kmLive []float64 // scratch
}

const programSamples = 4096

func newProgramModel(idle float64) programModel {
	return programModel{idle: time.Duration(idle * float64(time.Second)), minN: 10, started: true}
}

// finished books a finished call: a second of its service held its mean
// context.
func (m *programModel) finished(s *engine.Sequence) {
	svc := s.Service().Seconds()
	m.ctxSvc += svc * float64(s.PromptLen()+s.NumTokens()) / 2
	m.svc += svc
}

// complete books a program idle for longer than m.idle as completed
// (populations.sweep drops its row): its service becomes a sample.
func (m *programModel) complete(r *progRow) {
	m.add(r.attained().Seconds())
	m.programs++
	m.calls += float64(max(r.calls, 1))
	m.countCalls(max(r.calls, 1))
}

// refit rebuilds the model after a sweep: after 32 new samples (every new
// one while there are fewer than 4·minN), and the censored estimate over
// the class's live rows at every sweep. It reports whether the samples'
// model rebuilt (what the program order reads of it: started, ready, cv).
func (m *programModel) refit(t *processTable, class string) bool {
	rebuilt := m.fresh >= 32 || (m.fresh > 0 && len(m.sorted) < 4*m.minN)
	if rebuilt {
		m.rebuild()
	}
	if m.censored {
		m.rebuildCensored(t, class)
	}
	return rebuilt
}

// attained is the program's critical-path service so far, counting calls
// still running: the longest per-thread service of the engine's live row
// (ATLAS's measure without waiting for calls to complete), or the process
// table's when the engine's row is unknown.
func (r *progRow) attained() time.Duration {
	if r.eng != nil {
		return max(r.eng.CriticalPath(), r.service)
	}
	return r.service
}

func (m *programModel) add(x float64) {
	m.samples, m.next = pushRing(m.samples, m.next, x, programSamples)
	m.fresh++
}

// pushRing appends x to a sample of at most max values, overwriting the
// oldest (at next) once full, and returns the sample and the next slot.
func pushRing(xs []float64, next int, x float64, max int) ([]float64, int) {
	if len(xs) < max {
		return append(xs, x), next
	}
	xs[next] = x
	return xs, (next + 1) % max
}

func (m *programModel) rebuild() {
	m.sorted = append(m.sorted[:0], m.samples...)
	slices.Sort(m.sorted)
	m.suffix = slices.Grow(m.suffix[:0], len(m.sorted)+1)[:len(m.sorted)+1]
	m.suffix[len(m.sorted)] = 0
	for i := len(m.sorted) - 1; i >= 0; i-- {
		m.suffix[i] = m.suffix[i+1] + m.sorted[i]
	}
	m.gittins.build(m.sorted, m.suffix)
	m.started = m.startedFirst()
	m.rest.build(m.sorted, m.suffix)
	m.cv = 0
	if n := float64(len(m.sorted)); n > 0 && m.suffix[0] > 0 {
		mean, v := m.suffix[0]/n, 0.0
		for _, x := range m.sorted {
			v += (x - mean) * (x - mean)
		}
		m.cv = math.Sqrt(v/n) / mean
	}
	m.fresh = 0
}

// ready reports whether enough programs completed to trust the model.
func (m *programModel) ready() bool { return len(m.sorted) >= m.minN }

// residual is E[S − a | S > a] in seconds of service for a program that has
// attained a seconds. A program longer than every sample is expected to need
// as much again as it has had (the tail beyond the samples is unknown; this
// keeps the residual finite and growing).
func (m *programModel) residual(a float64) float64 {
	n := len(m.sorted)
	i := firstAbove(m.sorted, a)
	if i == n {
		return a
	}
	return m.suffix[i]/float64(n-i) - a
}

// remaining is the program's expected remaining work in token·seconds, 0
// until the model is ready.
func (m *programModel) remaining(a time.Duration) float64 {
	if !m.ready() || m.svc <= 0 {
		return 0
	}
	return m.residual(a.Seconds()) * m.ctxSvc / m.svc
}

// lastCall is the probability that a call ends its program: completed
// programs per call they made (1 where every program is a single call).
func (m *programModel) lastCall() float64 {
	if m.calls <= 0 {
		return 1
	}
	return m.programs / m.calls
}

// countCalls books a completed program's number of calls: it leaves the
// live counts for the completed ones.
func (m *programModel) countCalls(c int) {
	for len(m.atLeast) <= c {
		m.atLeast = append(m.atLeast, 0)
	}
	for k := 1; k <= c; k++ {
		m.atLeast[k]++
		if k < len(m.liveAtLeast) {
			m.liveAtLeast[k] = max(m.liveAtLeast[k]-1, 0)
		}
	}
}

// arrived books a live program's c-th call.
func (m *programModel) arrived(c int) {
	if c < 1 {
		return
	}
	for len(m.liveAtLeast) <= c {
		m.liveAtLeast = append(m.liveAtLeast, 0)
	}
	m.liveAtLeast[c]++
}

// nextCall is the probability that a program that has made k calls makes
// another, the Kaplan–Meier hazard's complement: of the programs known to
// have made k calls and whether they made a (k+1)-th (the completed ones
// with at least k, and the live ones already past k), the share that did.
// Live programs still at k are censored, not counted as ended, so that the
// long programs still running do not make the estimate favour the short
// ones that completed first. A uniform prior ((went on + 1) / (known + 2))
// makes a tail seen in few programs read as uncertain. ok is false until
// minN programs completed, or when fewer than minN programs are known at k
// (nothing to go on).
func (m *programModel) nextCall(k int) (q float64, ok bool) {
	if m.programs < float64(m.minN) || k < 1 {
		return 0, false
	}
	at := func(xs []float64, i int) float64 {
		if i < len(xs) {
			return xs[i]
		}
		return 0
	}
	on := at(m.atLeast, k+1) + at(m.liveAtLeast, k+1)
	known := at(m.atLeast, k) + at(m.liveAtLeast, k+1)
	if known < float64(m.minN) {
		return 0, false
	}
	return (on + 1) / (known + 2), true
}

// scale is the average context a second of service holds (tokens), which
// turns seconds of service into memory-over-time; 0 until a call finished.
func (m *programModel) scale() float64 {
	if m.svc <= 0 {
		return 0
	}
	return m.ctxSvc / m.svc
}
