package engine

import (
	"time"

	"github.com/pitstop-llm/pitstop/internal/dueheap"
)

// ProgramStats is the engine's row of a program (an agent made of calls):
// what program-level policies (Autellix PLAS/ATLAS) and the runtime's
// program table read.
type ProgramStats struct {
	ID           string
	Service      time.Duration // iteration time of all its calls so far
	Wait         time.Duration // time its calls were runnable but not scheduled
	Calls        int           // calls submitted
	Active       int           // calls not finished
	FirstArrival time.Duration
	LastArrival  time.Duration
	LastFinish   time.Duration
	// ThreadService is the service per thread; the critical path of a DAG
	// program is its largest entry (ATLAS).
	ThreadService map[string]time.Duration

	ttl time.Duration // how long it stays after its last call ends (its latest call's Request.ProgramTTL; 0: for good)
	due time.Duration // the earliest it can go, while in ProgramTable.due
	idx int           // its index in ProgramTable.due; -1 when not there
}

// CriticalPath is the largest service of any thread (ATLAS's service measure
// for programs with parallel threads).
func (p *ProgramStats) CriticalPath() time.Duration {
	var m time.Duration
	for _, d := range p.ThreadService {
		m = max(m, d)
	}
	return m
}

// ProgramTable holds the programs with calls in the engine, and for a while
// after: a row whose calls ask for a TTL (Request.ProgramTTL) goes that long
// after its last call ends, at the next Expire; a row without one stays.
type ProgramTable struct {
	rows map[string]*ProgramStats
	due  dueheap.Heap[*ProgramStats] // the rows with a TTL, the earliest they can go first (programs_expiry.go)
}

func newProgramTable() *ProgramTable { return &ProgramTable{rows: make(map[string]*ProgramStats)} }

// Get returns a program's row, or nil.
func (t *ProgramTable) Get(id string) *ProgramStats { return t.rows[id] }

// Len is the number of programs tracked.
func (t *ProgramTable) Len() int { return len(t.rows) }

// Each calls fn for every row.
func (t *ProgramTable) Each(fn func(*ProgramStats)) {
	for _, r := range t.rows {
		fn(r)
	}
}

func (t *ProgramTable) arrive(s *Sequence, now time.Duration) *ProgramStats {
	p := t.rows[s.req.Program]
	if p == nil {
		p = &ProgramStats{ID: s.req.Program, FirstArrival: now, ThreadService: map[string]time.Duration{}, idx: -1}
		t.rows[s.req.Program] = p
	}
	p.Calls++
	p.Active++
	p.LastArrival = now
	p.ttl = s.req.ProgramTTL
	t.file(p, now)
	return p
}

func (t *ProgramTable) finish(s *Sequence, now time.Duration) {
	s.prog.Active--
	s.prog.LastFinish = now
}
