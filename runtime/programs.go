package runtime

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pitstop-llm/pitstop/internal/dueheap"
	"github.com/pitstop-llm/pitstop/predictor"
)

// ProgramInfo is one row of the program table: an agent made of calls.
// Service, Wait and CriticalPath come from the engine (its policy schedules
// by them); the rest is the runtime's own bookkeeping.
type ProgramInfo struct {
	ID        string   `json:"id"`
	Tenant    string   `json:"tenant,omitempty"`
	Anonymous bool     `json:"anonymous,omitempty"` // a call without X-Pitstop-Program
	Calls     int      `json:"calls"`
	Active    int      `json:"active"`
	Threads   []string `json:"threads,omitempty"`
	// ServiceS is the engine time the program's calls received (Autellix's
	// attained service); WaitS the time they were runnable but not
	// scheduled; CriticalPathS the largest per-thread service.
	ServiceS       float64 `json:"service_s"`
	WaitS          float64 `json:"wait_s"`
	CriticalPathS  float64 `json:"critical_path_s"`
	PromptTokens   int     `json:"prompt_tokens"`
	CompletionToks int     `json:"completion_tokens"`
	// ToolRounds and ToolTimeS are server-side tool rounds run inside calls.
	ToolRounds int     `json:"tool_rounds"`
	ToolTimeS  float64 `json:"tool_time_s"`
	// ClientToolCalls are tool calls returned to the client; ClientGapS the
	// time between such a return and the program's next call.
	ClientToolCalls int     `json:"client_tool_calls"`
	ClientGapS      float64 `json:"client_gap_s"`
	// Invokes and InvokeTimeS are tool runs the agent asked for itself
	// (POST /v1/tools/{name}/invoke, or Runtime.Invoke).
	Invokes     int       `json:"invokes"`
	InvokeTimeS float64   `json:"invoke_time_s"`
	FirstSeen   time.Time `json:"first_seen"`
	LastSeen    time.Time `json:"last_seen"`
	// Outside is set while the program is between calls after returning
	// tool calls to the client, or while an invoked tool runs.
	OutsideSince *time.Time `json:"outside_since,omitempty"`
}

// program is a row plus what is not shown.
type program struct {
	key       string // its key in the table
	info      ProgramInfo
	threads   map[string]bool
	convs     map[string]*conversation // by conversationOf
	convTick  uint64                   // counts reads and bookings of conversations, for conversation.used
	segments  int
	gapTools  []string  // tools returned to the client at the last return
	gapStart  time.Time // when they were returned
	invokeRun int       // invokes in flight
	due       time.Time // the earliest it can expire (programs_expiry.go)
	idx       int       // its index in the table's heap (-1 before it is filed)
}

// conversation is what the length predictor learnt from one conversation
// of a program: its segment history and the blend of the model's errors on
// it (predictor.ProgramBlend).
type conversation struct {
	history predictor.History
	blend   predictor.ProgramBlend
	used    uint64 // the program's convTick when last read
	turns   int    // the model's turns its latest request carried (retries)
	// prefixes are the turn prefixes of its latest request's last
	// maxTurnPrefixes turns (turnPrefixes; retries).
	prefixes []uint64
}

// maxConversations bounds the conversations a program row keeps: past it,
// the least recently used is forgotten (a later call of it starts afresh).
// A memory bound, not a tuned value: a fan-out's subagents number a few to
// a few dozen.
const maxConversations = 256

// programTable is the runtime's program table, keyed by programKey (the
// tenant and the caller's id). Safe for concurrent use.
type programTable struct {
	mu   sync.Mutex
	rows map[string]*program
	due  dueheap.Heap[*program] // every row, the earliest due first
	// ttl and anonTTL are how long an idle row stays: a named program's, a
	// call's without a program id.
	ttl, anonTTL time.Duration
}

func newProgramTable(ttl, anonTTL time.Duration) *programTable {
	return &programTable{rows: map[string]*program{}, ttl: ttl, anonTTL: anonTTL}
}

// arrive books a new call of program id and returns the program's history
// and, when the program comes back after returning tool calls to the
// client, the tools and the gap.
func (t *programTable) arrive(key, id, tenant, thread string, anonymous bool, now time.Time) (gapTools []string, gap time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.row(key, id, tenant, now)
	p.info.Anonymous = anonymous
	p.info.Calls++
	p.info.Active++
	p.info.LastSeen = now
	if thread != "" && !p.threads[thread] {
		if p.threads == nil {
			p.threads = map[string]bool{} // most programs name no thread
		}
		p.threads[thread] = true
		p.info.Threads = append(p.info.Threads, thread)
	}
	if len(p.gapTools) > 0 {
		gapTools, gap = p.gapTools, now.Sub(p.gapStart)
		p.info.ClientGapS += gap.Seconds()
		p.gapTools = nil
	}
	if p.invokeRun == 0 {
		p.info.OutsideSince = nil
	}
	t.file(p, now)
	return gapTools, gap
}

// row returns the program's row, made when it is new (t.mu held).
func (t *programTable) row(key, id, tenant string, now time.Time) *program {
	p := t.rows[key]
	if p == nil {
		p = &program{key: key, info: ProgramInfo{ID: id, Tenant: tenant, FirstSeen: now}, idx: -1}
		t.rows[key] = p
	}
	return p
}

// history returns the segment history of the program's conversation conv
// (conversationOf) and what its length predictions learnt from it
// (predictor.ProgramBlend) for a call that starts now. Each conversation
// keeps its own: a program's parallel subagents (a fan-out) do not read
// their siblings' segments, and a new conversation starts with none. When
// the call starts a conversation the program has run before over
// (startsOver: a search restarting from its root resends the same opening
// with no turn), both restart: the call is a new conversation for the
// length predictor, as the replay has it (predictor.ProgramBlends, keyed by
// the record's thread). Only those two: the row's tenant, threads, counters
// and segment index, the engine's attained service and the KV cache's
// routing stay the program's, since a restart or a subagent is still the
// same agent for the scheduler (its service so far is what it has had) and
// for the cache (its prefix, the system prompt and the tools, is the same).
// A call still running from before a restart books its later segments into
// the fresh history, in the order they finish, as the replay does.
func (t *programTable) history(id, conv string, startsOver bool) (predictor.History, predictor.ProgramBlend) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.rows[id]
	if p == nil {
		return predictor.History{}, predictor.ProgramBlend{}
	}
	c := p.conversation(conv)
	if startsOver {
		c.history, c.blend = predictor.History{}, predictor.ProgramBlend{}
	}
	return c.history, c.blend
}

// conversation returns the program's conversation conv, made when it is
// new; past maxConversations the least recently used is dropped (t.mu held).
func (p *program) conversation(conv string) *conversation {
	p.convTick++
	if c := p.convs[conv]; c != nil {
		c.used = p.convTick
		return c
	}
	if p.convs == nil {
		p.convs = map[string]*conversation{}
	}
	if len(p.convs) >= maxConversations {
		var oldest string
		var used uint64
		for k, c := range p.convs {
			if used == 0 || c.used < used {
				oldest, used = k, c.used
			}
		}
		delete(p.convs, oldest)
	}
	c := &conversation{used: p.convTick}
	p.convs[conv] = c
	return c
}

// segment books a finished segment of the program's conversation conv, for
// which the length model predicted modelTokens (before the program blend),
// and returns its index in the program (it counts across conversations).
// retry says the segment was a retry (retries), which the blend keeps apart.
func (t *programTable) segment(id, conv string, outputTokens int, tool string, modelTokens int, retry bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.rows[id]
	if p == nil {
		return 0
	}
	c := p.conversation(conv)
	c.history = c.history.Observe(outputTokens, tool)
	c.blend = c.blend.Next(predictor.Input{Retry: retry}).Observe(modelTokens, outputTokens, tool)
	p.segments++
	return p.segments - 1
}

// finish books a finished call.
func (t *programTable) finish(id string, res *Result, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.rows[id]
	if p == nil {
		return
	}
	p.info.Active--
	p.info.LastSeen = now
	p.info.PromptTokens += res.Usage.PromptTokens
	p.info.CompletionToks += res.Usage.CompletionTokens
	p.info.ToolRounds += len(res.Rounds)
	p.info.ToolTimeS += res.Timing.Tools.Seconds()
	if res.Err == nil && len(res.ToolCalls) > 0 {
		p.info.ClientToolCalls += len(res.ToolCalls)
		p.gapTools = p.gapTools[:0]
		for _, c := range res.ToolCalls {
			p.gapTools = append(p.gapTools, c.Name)
		}
		p.gapStart = now
		n := now
		p.info.OutsideSince = &n
	}
}

// engineStats copies the engine's view of a program.
func (t *programTable) engineStats(id string, service, wait, critical time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.rows[id]; p != nil {
		p.info.ServiceS = service.Seconds()
		p.info.WaitS = wait.Seconds()
		p.info.CriticalPathS = critical.Seconds()
	}
}

// invokeStart and invokeEnd book a tool the agent runs through the runtime.
func (t *programTable) invokeStart(key, id, tenant string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.row(key, id, tenant, now)
	p.invokeRun++
	p.info.LastSeen = now
	if p.info.OutsideSince == nil {
		n := now
		p.info.OutsideSince = &n
	}
	t.file(p, now)
}

func (t *programTable) invokeEnd(id string, d time.Duration, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.rows[id]
	if p == nil {
		return
	}
	p.invokeRun--
	p.info.Invokes++
	p.info.InvokeTimeS += d.Seconds()
	p.info.LastSeen = now
	if p.invokeRun == 0 && len(p.gapTools) == 0 {
		p.info.OutsideSince = nil
	}
}

func (t *programTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.rows)
}

// list returns copies of the tenant's rows (all tenants' with all), oldest
// first.
func (t *programTable) list(tenant string, all bool) []ProgramInfo {
	t.mu.Lock()
	out := make([]ProgramInfo, 0, len(t.rows))
	for _, p := range t.rows {
		if !all && p.info.Tenant != tenant {
			continue
		}
		info := p.info
		info.Threads = slices.Clone(info.Threads)
		if info.OutsideSince != nil {
			s := *info.OutsideSince
			info.OutsideSince = &s
		}
		out = append(out, info)
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b ProgramInfo) int {
		if c := a.FirstSeen.Compare(b.FirstSeen); c != 0 {
			return c
		}
		if c := strings.Compare(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// get returns a copy of one row.
func (t *programTable) get(id string) (ProgramInfo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.rows[id]
	if p == nil {
		return ProgramInfo{}, false
	}
	info := p.info
	info.Threads = slices.Clone(info.Threads)
	return info, true
}
