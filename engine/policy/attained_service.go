package policy

import (
	"math"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// serviceMode is how a program's attained service is measured.
type serviceMode uint8

const (
	callService  serviceMode = iota // MLFQ: the call's own service; every call starts in the first queue
	programSum                      // PLAS: sum of the program's completed calls' service
	criticalPath                    // ATLAS: longest critical path over the program's threads
)

// progRow is one program in the process table (Autellix §4.2.1).
type progRow struct {
	service     time.Duration // PLAS: completed calls' service summed; ATLAS: longest critical path seen
	wait        time.Duration // completed calls' wait (runnable, not running)
	active      int           // calls in the engine (threads)
	lastArrival time.Duration
	lastFinish  time.Duration
	eng         *engine.ProgramStats // the engine's live row of the program
	first       time.Duration        // its first call's arrival
	calls       int                  // calls that arrived
	dag         bool                 // it has had two calls in the engine at once
	begun       bool                 // a call of it has generated a token (shape_shown.go)
	class       string               // its calls' engine.Request.Class: the population it is learned in
}

// processTable is Autellix's process table, kept from engine events. A
// call's segment (the stretch up to a tool call, or to the end) counts as one
// LLM call: a tool's return is the program's next call, as in Autellix,
// where every LLM call is a request of its own.
type processTable struct {
	mode      serviceMode
	rows      map[string]*progRow
	ttl       time.Duration
	lastSweep time.Duration
	shapes    map[string]*tableShape // per class (engine.Request.Class)
	pooled    bool                   // every program in class "" (pitstop's PitstopClasses "pooled")
	// reshaped, when set, hears of every class whose shape changes
	// (pitstop's cache of program orders, class_orders.go).
	reshaped func(class string)
}

// tableShape is the shape of one class's programs seen so far: pitstop's
// program order reads it (a class of chains and a class of tree searches
// sharing an engine are each ordered as their own programs ask).
type tableShape struct {
	anyMulti bool // some program has had more than one call
	programs int  // programs seen
	threaded int  // of which had two calls in the engine at once (DAG programs)
	shown    int  // of which made a second call: their shape is known (shape_shown.go)
	held     int  // of which no call has generated a token yet (shape_shown.go)
}

func newProcessTable(mode serviceMode, ttl float64) processTable {
	return processTable{mode: mode, rows: map[string]*progRow{}, ttl: time.Duration(ttl * float64(time.Second)), shapes: map[string]*tableShape{}}
}

// classOf is the class the call's program is learned in.
func (t *processTable) classOf(s *engine.Sequence) string {
	if t.pooled {
		return ""
	}
	return s.Class()
}

// shape is the class's shape, made empty at its first sight, for a change.
func (t *processTable) shape(class string) *tableShape {
	if t.reshaped != nil {
		t.reshaped(class)
	}
	sh := t.shapes[class]
	if sh == nil {
		sh = &tableShape{}
		t.shapes[class] = sh
	}
	return sh
}

// begin starts a call (or a resumed segment): it inherits the program's
// service as its priority p(c).
func (t *processTable) begin(s *engine.Sequence, st *callState, now time.Duration, arrival bool) {
	if st.row == nil && t.mode == callService {
		st.row = &progRow{class: t.classOf(s)} // MLFQ knows no programs: each call is its own row
	}
	if st.row == nil {
		r := t.rows[s.Program()]
		if r == nil {
			r = &progRow{eng: s.ProgramStats(), first: now, class: t.classOf(s)}
			t.rows[s.Program()] = r
			sh := t.shape(r.class)
			sh.programs++
			sh.held++
		}
		st.row = r
	}
	if arrival {
		st.row.active++
		st.row.lastArrival = now
		if st.row.calls++; st.row.calls > 1 {
			t.shape(st.row.class).anyMulti = true
		}
		if st.row.calls == 2 {
			t.shape(st.row.class).shown++
		}
		if st.row.active == 2 && !st.row.dag {
			st.row.dag = true
			t.shape(st.row.class).threaded++
		}
	}
	if t.mode != callService {
		st.inherit = st.row.service
	}
	st.waitBase, st.segWait = s.Waited(), s.Waited()
	st.svcBase, st.segSvc = s.Service(), s.Service()
}

// end books a finished segment (paused at a tool or finished) into the
// program's row: PLAS adds its service, ATLAS keeps the longest critical
// path (the service it inherited plus its own), Autellix Algorithm 1 line 4.
func (t *processTable) end(s *engine.Sequence, st *callState, now time.Duration, finished bool) {
	r := st.row
	if r == nil {
		return
	}
	svc := s.Service() - st.segSvc
	switch t.mode {
	case programSum:
		r.service += svc
	case criticalPath:
		r.service = max(r.service, st.inherit+svc)
	}
	r.wait += s.Waited() - st.segWait
	if finished {
		r.active--
		r.lastFinish = now
	}
}

// shapeOf is the class's shape, empty before its first program.
func (t *processTable) shapeOf(class string) tableShape {
	if sh := t.shapes[class]; sh != nil {
		return *sh
	}
	return tableShape{}
}

// sweep drops programs idle for longer than the TTL, at most once per TTL/4.
func (t *processTable) sweep(now time.Duration) {
	if now-t.lastSweep < t.ttl/4 {
		return
	}
	t.lastSweep = now
	for id, r := range t.rows {
		if r.active <= 0 && now-r.lastFinish > t.ttl {
			// A program dropped before any call of it generated a token
			// stays held: like programs, the count keeps every program
			// seen, and one that never began showed no shape, so the held
			// test (shape_shown.go) must not count it as a chain.
			delete(t.rows, id)
		}
	}
}

// queueSet is the K attained-service queues: queue i covers service
// [q0·(2^i−1), q0·(2^(i+1)−1)) and has quantum q0·2^i; the last queue is
// unbounded.
type queueSet struct {
	lo     []time.Duration
	quanta []time.Duration
}

func newQueueSet(k int, q0 float64) queueSet {
	qs := queueSet{lo: make([]time.Duration, k), quanta: make([]time.Duration, k)}
	for i := range k {
		qs.lo[i] = time.Duration(q0 * (math.Exp2(float64(i)) - 1) * float64(time.Second))
		qs.quanta[i] = time.Duration(q0 * math.Exp2(float64(i)) * float64(time.Second))
	}
	qs.quanta[k-1] = math.MaxInt64
	return qs
}

// index is the queue whose range holds service p.
func (q *queueSet) index(p time.Duration) int {
	i := 0
	for i+1 < len(q.lo) && p >= q.lo[i+1] {
		i++
	}
	return i
}

// attained is the machinery shared by mlfq, plas, atlas and pitstop: the
// process table, the queues, demotion on an exhausted quantum and promotion
// when a program has waited β times its service (Autellix Algorithm 1).
type attained struct {
	wholeCalls bool // a call's segments are one call: its tool returns do not end it
	noDemote   bool
	table      processTable
	queues     queueSet
	beta       float64
	multiStep  int64
	agingEvery int64
	lastAging  int64
}

func newAttained(mode serviceMode, o Options) attained {
	return attained{
		table:      newProcessTable(mode, o.ProgramTTL),
		queues:     newQueueSet(o.Queues, o.Quantum),
		beta:       o.Beta,
		multiStep:  o.MultiStep,
		agingEvery: o.AgingEvery,
	}
}

// observe keeps the process table and places calls in their queues.
func (a *attained) observe(e *engine.Event) {
	switch e.Kind {
	case engine.EvArrived, engine.EvResumed:
		st := stateOf(e.Seq)
		if e.Kind == engine.EvResumed {
			st.newSegment(e.Seq)
			if a.wholeCalls {
				return
			}
		}
		a.table.begin(e.Seq, st, e.Time, e.Kind == engine.EvArrived)
		st.queue = a.queues.index(st.inherit)
		st.entered = e.Time.Seconds()
		st.qService = e.Seq.Service()
	case engine.EvPaused:
		if !a.wholeCalls {
			a.table.end(e.Seq, stateOf(e.Seq), e.Time, false)
		}
	case engine.EvFinished:
		a.table.end(e.Seq, stateOf(e.Seq), e.Time, true)
	case engine.EvToken:
		if r := stateOf(e.Seq).row; r != nil && !r.begun {
			r.begun = true
			a.table.shape(r.class).held--
		}
	case engine.EvIteration:
		a.table.sweep(e.Time)
	}
}

// queueOf updates the call's queue (demotion, promotion) and returns it.
func (a *attained) queueOf(v *engine.View, s *engine.Sequence, st *callState) int {
	if st.row == nil { // not seen arriving (a policy used without its events)
		a.table.begin(s, st, v.Now, true)
		st.queue = a.queues.index(st.inherit)
		st.entered = s.Arrival().Seconds()
		st.qService = s.Service()
	}
	if !a.noDemote && (a.multiStep <= 1 || v.Iteration%a.multiStep == 0) {
		for st.queue+1 < len(a.queues.quanta) && s.Service()-st.qService >= a.queues.quanta[st.queue] {
			st.queue++ // quantum exhausted: demote, to the tail of the next queue
			st.qService = s.Service()
			st.entered = v.Now.Seconds()
		}
	}
	if a.beta > 0 && st.queue > 0 {
		wait := st.row.wait + v.Wait(s) - st.waitBase
		svc := st.row.service + s.Service() - st.svcBase
		if svc > 0 && float64(wait) >= a.beta*float64(svc) {
			st.queue = 0 // starving program: promote to the first queue
			st.qService = s.Service()
			st.entered = v.Now.Seconds()
			st.waitBase = v.Wait(s)
			st.svcBase = s.Service()
		}
	}
	return st.queue
}

// betweenSteps reports whether this iteration lies between two scheduling
// points of multi-step scheduling (MultiStep > 1).
func (a *attained) betweenSteps(v *engine.View) bool {
	return a.multiStep > 1 && v.Iteration%a.multiStep != 0
}

// refresh asks for a re-rank every agingEvery iterations, so waiting calls
// whose program crossed β get promoted.
func (a *attained) refresh(v *engine.View) bool {
	if a.beta <= 0 || v.Iteration-a.lastAging < a.agingEvery {
		return false
	}
	a.lastAging = v.Iteration
	return true
}
