package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pitstop-llm/pitstop/handling"
	"github.com/pitstop-llm/pitstop/kvswap"
)

// Config sizes the engine.
type Config struct {
	NumBlocks         int     // device KV blocks
	BlockSize         int     // tokens per block (16)
	HostBlocks        int     // host tier capacity in blocks (0: no swapping; swaps become discards)
	MaxBatchedTokens  int     // token budget per iteration (chunked prefill)
	MaxSeqs           int     // sequences per iteration
	SwapBlocksPerIter int     // swap budget per iteration in blocks (<=0: unlimited)
	WatermarkFrac     float64 // blocks kept free when admitting new calls (vLLM: 0.01)
	Cost              handling.CostModel
	// Host, when set, is the host tier to use: a real executor that moves
	// bytes shares it with the engine (the engine allocates slots, the
	// executor copies). Otherwise the engine makes an accounting-only tier of
	// HostBlocks blocks of HostBlockBytes bytes.
	Host           *kvswap.HostTier
	HostBlockBytes int
	// CacheEviction is the order in which the prefix cache evicts free
	// blocks (cache_eviction.go): "" or CacheLRU, or CacheSecondChance.
	CacheEviction CacheEviction
}

func (c *Config) validate() error {
	switch {
	case c.NumBlocks <= 0:
		return fmt.Errorf("engine: NumBlocks must be positive, got %d", c.NumBlocks)
	case c.BlockSize <= 0:
		return fmt.Errorf("engine: BlockSize must be positive, got %d", c.BlockSize)
	case c.MaxBatchedTokens <= 0:
		return fmt.Errorf("engine: MaxBatchedTokens must be positive, got %d", c.MaxBatchedTokens)
	case c.MaxSeqs <= 0:
		return fmt.Errorf("engine: MaxSeqs must be positive, got %d", c.MaxSeqs)
	case c.HostBlocks < 0:
		return fmt.Errorf("engine: HostBlocks must not be negative, got %d", c.HostBlocks)
	}
	if _, err := ParseCacheEviction(string(c.CacheEviction)); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}

// Engine is the iteration loop. All state is owned by the goroutine running
// Run; other goroutines talk to it through Submit, Resume, Cancel and Post.
type Engine struct {
	cfg      Config
	clock    Clock
	vclock   *VirtualClock // non-nil when virtual
	exec     Executor
	policy   Policy
	traits   Traits
	observer []Observer // the policy first

	blocks     *BlockManager
	watched    map[string]watchedCtx // contexts released as RetainWatch, by program (cache_hint.go)
	host       *kvswap.HostTier
	swapBudget *kvswap.Budget
	timers     timers
	programs   *ProgramTable

	nextID    SeqID
	seqs      map[SeqID]*Sequence
	queue     runQueue    // runnable calls in policy order
	active    []*Sequence // calls in state Running (KV on the device, runnable)
	dirty     []*Sequence // calls to re-rank before the next iteration
	paused    []*Sequence // paused with KV on the device
	onHost    []*Sequence // calls holding host slots (swapped, or paused with KV on the host)
	hostVer   uint64      // changes with onHost
	hostRanks hostRanks   // the parked KV that may give way, in HostRank order
	cands     []*Sequence // victim candidates handed to the policy (scratch)
	batch     Batch
	view      View
	viewIter  int64 // iteration whose batch view.Running/RunningCtx count
	iter      int64
	stats     IterationStats
	watermark int
	wholeWalk bool // tests only: fillBatch walks the whole run queue and asks Admit of every call, as before it stopped early

	mu            sync.Mutex
	inbox         []func()
	wake          chan struct{}
	due           []func()
	hostAfterStep []int
	guardOf       []*Sequence // per device block: the discarded call whose context it holds (rescue.go)
	ev            Event
	failed        error
}

// New builds an engine. A virtual clock makes it a discrete-event simulator.
func New(cfg Config, clock Clock, exec Executor, policy Policy, observers ...Observer) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.HostBlockBytes <= 0 {
		cfg.HostBlockBytes = 1 // accounting only: swap bytes are then counted in blocks
	}
	if cfg.WatermarkFrac == 0 {
		cfg.WatermarkFrac = 0.01
	}
	e := &Engine{
		cfg:      cfg,
		clock:    clock,
		exec:     exec,
		policy:   policy,
		traits:   policy.Traits(),
		observer: append([]Observer{policy}, observers...),
		programs: newProgramTable(),
		seqs:     make(map[SeqID]*Sequence),
		wake:     make(chan struct{}, 1),
	}
	if vc, ok := clock.(*VirtualClock); ok {
		e.vclock = vc
	}
	e.blocks = NewBlockManager(cfg.NumBlocks, cfg.BlockSize, e.traits.PrefixCache)
	e.blocks.SetEviction(cfg.CacheEviction)
	e.guardOf = make([]*Sequence, cfg.NumBlocks)
	e.blocks.beforeEvict = e.rescue
	e.host = cfg.Host
	if e.host == nil {
		e.host = kvswap.NewHostTier(cfg.HostBlocks, cfg.HostBlockBytes, false)
	}
	e.swapBudget = kvswap.NewBudget(cfg.SwapBlocksPerIter)
	e.watermark = int(cfg.WatermarkFrac * float64(cfg.NumBlocks))
	return e, nil
}

// Blocks exposes the block manager (read-only use: sizes and Check).
func (e *Engine) Blocks() *BlockManager { return e.blocks }

// Host is the host tier.
func (e *Engine) Host() *kvswap.HostTier { return e.host }

// Now is the engine clock's time.
func (e *Engine) Now() time.Duration { return e.clock.Now() }

// View is a copy of the state the policy decides on, as it stands (engine
// goroutine only): an observer explaining a decision at an EvPaused event
// sees what the policy saw.
func (e *Engine) View() View { return e.view }

// Programs is the program table; read it only on the engine goroutine (from
// an Observer or a Post callback).
func (e *Engine) Programs() *ProgramTable { return e.programs }

// Post runs fn on the engine goroutine before the next iteration. Safe from
// any goroutine.
func (e *Engine) Post(fn func()) {
	e.mu.Lock()
	e.inbox = append(e.inbox, fn)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// At runs fn on the engine goroutine at clock instant t. Call it only from
// the engine goroutine (an Observer, a Post callback, another timer).
func (e *Engine) At(t time.Duration, fn func()) { e.timers.add(t, fn) }

// SubmitNow admits a request; call it on the engine goroutine. It returns the
// sequence, or an error when the request can never run.
func (e *Engine) SubmitNow(r Request) (*Sequence, error) {
	if r.Controller == nil {
		return nil, errors.New("engine: request has no controller")
	}
	if len(r.Prompt) == 0 {
		return nil, errors.New("engine: request has an empty prompt")
	}
	if need := e.blocks.BlocksFor(len(r.Prompt) + 1); need > e.cfg.NumBlocks-e.watermark {
		return nil, fmt.Errorf("engine: prompt of %d tokens needs %d KV blocks, the device has %d", len(r.Prompt), need, e.cfg.NumBlocks-e.watermark)
	}
	if r.Program == "" {
		r.Program = fmt.Sprintf("call-%d", e.nextID+1)
	}
	e.nextID++
	now := e.clock.Now()
	s := &Sequence{
		id:        e.nextID,
		req:       r,
		tokens:    slices.Clip(r.Prompt),
		promptLen: len(r.Prompt),
		arrival:   now,
		place:     Dropped,
		activeIdx: -1,
		hostIdx:   -1,
	}
	s.forecast = r.Controller.Forecast(s)
	e.seqs[s.id] = s
	e.becomeReady(s)
	s.prog = e.programs.arrive(s, now)
	delete(e.watched, r.Program) // its context is in use again
	e.emit(Event{Kind: EvArrived, Seq: s})
	return s, nil
}

// Resume appends a tool's result to a paused sequence and makes it runnable;
// call it on the engine goroutine (from any goroutine: Post a closure).
func (e *Engine) Resume(id SeqID, result []int32) error {
	s := e.seqs[id]
	if s == nil || s.state != Paused {
		return fmt.Errorf("engine: sequence %d is not paused", id)
	}
	return e.resume(s, result)
}

// ResumeWith is Resume for a paused sequence that goes on as a new request
// with its own sampling (the runtime's call parked across a client's tools):
// its tokens from now on are drawn with sampling.
func (e *Engine) ResumeWith(id SeqID, result []int32, sampling Sampling) error {
	s := e.seqs[id]
	if s == nil || s.state != Paused {
		return fmt.Errorf("engine: sequence %d is not paused", id)
	}
	s.req.Sampling = sampling
	return e.resume(s, result)
}

func (e *Engine) resume(s *Sequence, result []int32) error {
	s.tokens = append(s.tokens, result...)
	s.segments++
	switch {
	case s.place == OnDevice:
		e.setState(s, Running)
		s.pendingOut = false
	case s.place == OnHost:
		s.state = Swapped
	default:
		s.state = Waiting
	}
	s.forecast = s.req.Controller.Forecast(s)
	e.becomeReady(s)
	e.emit(Event{Kind: EvResumed, Seq: s})
	return nil
}

// Cancel ends a sequence wherever it is and frees its blocks.
func (e *Engine) Cancel(id SeqID) {
	if s := e.seqs[id]; s != nil {
		s.cancelled = true
		e.finish(s, nil)
	}
}

// Stop makes Run return err before its next iteration; call it on the
// engine goroutine (an Observer that found a broken invariant).
func (e *Engine) Stop(err error) {
	if e.failed == nil {
		e.failed = err
	}
}

// Sequence returns a live sequence by id.
func (e *Engine) Sequence(id SeqID) *Sequence { return e.seqs[id] }

// Live is the number of unfinished sequences.
func (e *Engine) Live() int { return len(e.seqs) }

// Check verifies the block manager's and host tier's invariants against all
// live sequences.
func (e *Engine) Check() error {
	tables := make([][]int32, 0, len(e.seqs))
	hostUsed := 0
	for _, s := range e.seqs {
		tables = append(tables, s.blocks)
		hostUsed += len(s.host)
	}
	hostUsed += len(e.hostAfterStep)
	if err := e.blocks.Check(tables); err != nil {
		return err
	}
	if hostUsed != e.host.Used() {
		return fmt.Errorf("host tier has %d slots used, sequences hold %d", e.host.Used(), hostUsed)
	}
	for b, s := range e.guardOf {
		if s != nil && e.seqs[s.id] != s {
			return fmt.Errorf("block %d is guarded for call %d, which has finished", b, s.id)
		}
	}
	return nil
}

// Leaked is the number of device blocks and host slots held with no live
// sequence: non-zero after a drained run means a bug.
func (e *Engine) Leaked() int {
	// A prefix block may be shared by several calls: count distinct blocks.
	owned := make([]bool, e.cfg.NumBlocks)
	held := 0
	for _, s := range e.seqs {
		for _, b := range s.blocks {
			if !owned[b] {
				owned[b] = true
				held++
			}
		}
		held += len(s.host)
	}
	held += len(e.hostAfterStep)
	return e.blocks.UsedBlocks() + e.host.Used() - held
}

// Run drives the loop until ctx ends. With a virtual clock it returns when
// nothing is left to do (no work, no timers, no posts).
func (e *Engine) Run(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		e.drain()
		if e.failed != nil {
			return e.failed
		}
		if e.hasWork() {
			ran, err := e.step()
			if err != nil {
				return err
			}
			if ran {
				continue
			}
		}
		// Nothing could run: wait for the next timer or post.
		next, ok := e.timers.next()
		if e.vclock != nil {
			if !ok {
				if e.pendingPosts() {
					continue
				}
				if e.hasWork() {
					return fmt.Errorf("engine: stuck with %d runnable calls and nothing that could free memory", e.queue.live)
				}
				return nil
			}
			e.vclock.jump(next)
			continue
		}
		var tc <-chan time.Time
		var t *time.Timer
		if ok {
			t = time.NewTimer(next - e.clock.Now())
			tc = t.C
		}
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-tc:
		}
		if t != nil {
			t.Stop()
		}
	}
}

func (e *Engine) pendingPosts() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.inbox) > 0
}

// drain runs posted callbacks and due timers.
func (e *Engine) drain() {
	e.mu.Lock()
	posts := e.inbox
	e.inbox = nil
	e.mu.Unlock()
	for _, fn := range posts {
		fn()
	}
	e.due = e.timers.popDue(e.clock.Now(), e.due[:0])
	for i, fn := range e.due {
		fn()
		e.due[i] = nil
	}
}

func (e *Engine) hasWork() bool {
	return e.queue.live > 0 || len(e.dirty) > 0 || e.hasPendingSwapOut()
}

// becomeReady starts a runnable stretch: the call is ranked before the next
// iteration, and its wait and starvation count from now.
func (e *Engine) becomeReady(s *Sequence) {
	s.readyAt = e.clock.Now()
	s.readySvc = s.service
	s.lastRun = e.iter
	e.markDirty(s)
}

// leaveRunnable ends a runnable stretch (pause or finish) and books its wait.
func (e *Engine) leaveRunnable(s *Sequence) {
	w := max((e.clock.Now()-s.readyAt)-(s.service-s.readySvc), 0)
	s.waitAccum += w
	s.prog.Wait += w
	e.queue.remove(s)
}

// markDirty asks for the call's priority again before the next iteration.
func (e *Engine) markDirty(s *Sequence) {
	if !s.dirty {
		s.dirty = true
		e.dirty = append(e.dirty, s)
	}
}

// setState changes a call's state, keeping the set of running calls.
func (e *Engine) setState(s *Sequence, st State) {
	if (s.activeIdx >= 0) == (st == Running) {
		s.state = st
		return
	}
	if st == Running {
		s.debt = loadDebt{iter: e.iter} // admitted: its residency starts
		s.activeIdx = len(e.active)
		e.active = append(e.active, s)
	} else {
		last := e.active[len(e.active)-1]
		e.active[s.activeIdx] = last
		last.activeIdx = s.activeIdx
		e.active[len(e.active)-1] = nil
		e.active = e.active[:len(e.active)-1]
		s.activeIdx = -1
	}
	s.state = st
}

func (e *Engine) hasPendingSwapOut() bool {
	for _, s := range e.paused {
		if s.pendingOut {
			return true
		}
	}
	return false
}

// emit hands an event to the observers. The Event is reused: observers must
// copy what they keep.
func (e *Engine) emit(ev Event) {
	ev.Time = e.clock.Now()
	e.ev = ev
	for _, o := range e.observer {
		o.Observe(&e.ev)
	}
}
