package engine

import (
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// SeqID identifies a sequence (one LLM call) inside an engine.
type SeqID uint64

// State is where a sequence is in its life.
type State uint8

const (
	Waiting  State = iota // runnable, no KV on the device: new, or discarded and to be recomputed
	Running               // runnable, KV on the device
	Swapped               // runnable, KV on the host tier: needs a swap-in first
	Paused                // waiting for a tool; its KV is where Place says
	Finished              // done or cancelled; holds nothing
)

var stateNames = [...]string{"waiting", "running", "swapped", "paused", "finished"}

func (s State) String() string { return stateNames[s] }

// Place is where a sequence's KV lives.
type Place uint8

const (
	OnDevice Place = iota
	OnHost
	Dropped
)

// Prediction is what is known or guessed about a call's current segment.
type Prediction struct {
	Decode     int     // tokens still to generate before the next tool call, or before the end
	HasTool    bool    // the segment ends in a tool call
	ToolTime   float64 // seconds the tool takes
	ToolReturn int     // tokens the tool's result adds
	After      int     // tokens generated after the tool, to the end of the call
}

// Forecast pairs the predicted view of a segment with the truth when the
// caller knows it (trace replay); oracle policies read Truth, others Predicted.
type Forecast struct {
	Predicted Prediction
	Truth     Prediction
	HasTruth  bool
	// Dist is the predictor's uncertainty behind Predicted; nil when the
	// prediction is a point (oracle, noise, history).
	Dist *Distribution
}

// Distribution is what a learnt predictor knows beyond its point
// prediction, for policies that choose by expected cost.
type Distribution struct {
	// LengthProbs[b] is the probability that the segment's whole output
	// (Decoded tokens so far included) is in [b, b+1)·LengthBinWidth tokens;
	// the last entry is everything longer, which OverflowTokens stands for.
	LengthProbs    []float32
	LengthBinWidth int
	OverflowTokens int
	Decoded        int // tokens the segment had generated when this was predicted
	// ToolTimeQuantiles[i] is the tool duration's ToolTimeLevels[i]-quantile
	// in seconds (empty when the segment ends the call or nothing is known).
	ToolTimeLevels    []float64
	ToolTimeQuantiles []float64
}

// ActionKind is what a sequence does after a sampled token.
type ActionKind uint8

const (
	Continue ActionKind = iota
	Pause               // a tool call was emitted: wait for Resume
	Finish              // end of the call (EOS, max tokens, end of script)
)

// ToolCall describes the tool a paused sequence waits for.
type ToolCall struct {
	Name     string
	Expected float64 // predicted duration in seconds, for handling
}

// Action is the controller's answer to a sampled token.
type Action struct {
	Token int32 // the token appended (a script may force it)
	Kind  ActionKind
	Tool  ToolCall
}

// Controller decides what a sampled token means for its sequence: the real
// streaming tool-call parser of a model, or a trace script. It is called on
// the engine's goroutine and must not block.
type Controller interface {
	Next(s *Sequence, sampled int32) Action
	Forecast(s *Sequence) Forecast
}

// Request is what a caller submits: one LLM call.
type Request struct {
	Name       string   // caller's id for the call, for logs and metrics
	Program    string   // program id; empty = a program of its own
	Tenant     string   // the program's owner, for sharing the engine between tenants (opaque to the engine)
	Thread     string   // thread inside the program
	Parents    []string // parent threads (DAG programs)
	Prompt     []int32  // prompt tokens
	MaxTokens  int      // cap on generated tokens; 0 = no cap beyond the controller
	Sampling   Sampling // how the executor draws its tokens (greedy when zero)
	Controller Controller
	// ProgramTTL is how long the program's row stays in the program table
	// after its last call ends; 0 keeps it for good (a simulation's run).
	ProgramTTL time.Duration
	// CacheSalt is the prefix cache's namespace: the root of the call's
	// chain of block hashes, so blocks of calls with different salts never
	// match, whatever their tokens. 0 is the namespace of calls without one
	// (the hashes of before salts existed). The caller chooses it (the
	// runtime: a keyed hash of the tenant); the engine only compares.
	CacheSalt uint64
	// Class is the population whose statistics the policy learns this
	// call's program from and applies to it (program sizes, reuse of its
	// context): programs of one class are taken to be drawn alike, programs
	// of different classes are learned apart, so one class's programs never
	// move another's order or cache retention. The runtime sets it to the
	// tenant; "" is one class like any other (bench's runs). Opaque to the
	// engine, which only passes it on.
	Class string
}

// Sequence is the engine's state of one call. Policies read it through its
// methods; only the engine changes it.
type Sequence struct {
	id  SeqID
	req Request

	state    State
	place    Place
	tokens   []int32  // context: prompt, generated and tool-result tokens
	computed int      // tokens whose KV exists (on device, or on host when swapped)
	hashes   []uint64 // chained hashes of the full blocks of tokens
	blocks   []int32  // device block table
	host     []int    // host slots while swapped
	onHost   int      // tokens covered by host slots
	guarded  []int32  // blocks whose guardOf is this call (rescue.go)
	tail     int      // context length whose partial last block the prefix cache keeps since the last discard (0: none)

	promptLen int
	generated int
	highWater int       // most tokens ever computed, to count recomputation
	lostBy    LossCause // why its KV was last dropped, to say what its recomputation is for
	debt      loadDebt  // device time since its last admission (load_debt.go)

	arrival    time.Duration
	firstToken time.Duration
	finishedAt time.Duration
	pausedAt   time.Duration
	readyAt    time.Duration // last time it became runnable
	tool       ToolCall
	handling   handling.Kind // decision for the current pause
	segments   int           // tool calls so far

	forecast    Forecast
	service     time.Duration // iteration time spent in batches
	waitAccum   time.Duration // wait of earlier runnable stretches
	readySvc    time.Duration // service when it last became runnable
	preemptions int
	cancelled   bool
	pendingOut  bool  // chosen for swap-out, waiting for swap budget
	committed   int   // full blocks registered in the prefix cache
	lastRun     int64 // iteration it last ran, or became runnable
	lastEvicted int64
	viewCtx     int // context it added to View.RunningCtx; viewIter: in which count
	viewIter    int64
	// run queue and active-set bookkeeping (run_queue.go, engine.go)
	queued    bool
	ver       uint32
	prio      Priority
	dirty     bool
	activeIdx int
	hostIdx   int     // index in the engine's onHost, -1 when holding no host slot
	hostIter  int64   // iteration of its last swap-out
	hostRank  float64 // the policy's HostRank when the engine last ordered the host tier
	prog      *ProgramStats
	err       error

	// PolicyKey and PolicyState are scratch space owned by the policy in use.
	PolicyKey   float64
	PolicyState any
}

func (s *Sequence) ID() SeqID                 { return s.id }
func (s *Sequence) Name() string              { return s.req.Name }
func (s *Sequence) Program() string           { return s.req.Program }
func (s *Sequence) Tenant() string            { return s.req.Tenant }
func (s *Sequence) Class() string             { return s.req.Class }
func (s *Sequence) CacheSalt() uint64         { return s.req.CacheSalt }
func (s *Sequence) Thread() string            { return s.req.Thread }
func (s *Sequence) Parents() []string         { return s.req.Parents }
func (s *Sequence) State() State              { return s.state }
func (s *Sequence) Place() Place              { return s.place }
func (s *Sequence) Tokens() []int32           { return s.tokens }
func (s *Sequence) NumTokens() int            { return len(s.tokens) }
func (s *Sequence) Computed() int             { return s.computed }
func (s *Sequence) PromptLen() int            { return s.promptLen }
func (s *Sequence) Generated() int            { return s.generated }
func (s *Sequence) Arrival() time.Duration    { return s.arrival }
func (s *Sequence) FirstToken() time.Duration { return s.firstToken }
func (s *Sequence) FinishedAt() time.Duration { return s.finishedAt }
func (s *Sequence) PausedAt() time.Duration   { return s.pausedAt }
func (s *Sequence) ReadyAt() time.Duration    { return s.readyAt }
func (s *Sequence) Tool() ToolCall            { return s.tool }
func (s *Sequence) Handling() handling.Kind   { return s.handling }
func (s *Sequence) ToolCalls() int            { return s.segments }
func (s *Sequence) Forecast() Forecast        { return s.forecast }
func (s *Sequence) Service() time.Duration    { return s.service }
func (s *Sequence) Priority() Priority        { return s.prio }
func (s *Sequence) Preemptions() int          { return s.preemptions }
func (s *Sequence) Cancelled() bool           { return s.cancelled }
func (s *Sequence) Blocks() []int32           { return s.blocks }
func (s *Sequence) Runnable() bool            { return s.state <= Swapped }
func (s *Sequence) ResidentBlocks() int       { return len(s.blocks) }
func (s *Sequence) Remaining() int            { return len(s.tokens) - s.computed }
func (s *Sequence) MaxTokens() int            { return s.req.MaxTokens }
func (s *Sequence) Controller() Controller    { return s.req.Controller }
func (s *Sequence) Sampling() Sampling        { return s.req.Sampling }
func (s *Sequence) HostSlots() []int          { return s.host }

// Waited is the wait (runnable but not running) of the call's earlier
// runnable stretches: its whole wait once it has paused or finished. The
// current stretch is View.Wait's to add. Read-only, for process tables.
func (s *Sequence) Waited() time.Duration { return s.waitAccum }

// ProgramStats is the engine's row of the call's program (live service,
// wait and per-thread service); read it only on the engine goroutine.
func (s *Sequence) ProgramStats() *ProgramStats { return s.prog }

func (s *Sequence) ToolElapsed(now time.Duration) float64 {
	if s.state != Paused {
		return 0
	}
	return (now - s.pausedAt).Seconds()
}

// blockHashes extends the chained hashes to every full block of tokens.
func (s *Sequence) blockHashes(blockSize int) []uint64 {
	full := len(s.tokens) / blockSize
	for i := len(s.hashes); i < full; i++ {
		toks := s.tokens[i*blockSize : (i+1)*blockSize]
		if i == 0 {
			s.hashes = append(s.hashes, hashRoot(s.req.CacheSalt, 0, toks))
		} else {
			s.hashes = append(s.hashes, hashBlock(s.hashes[i-1], toks))
		}
	}
	return s.hashes
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashBlock is FNV-1a over the parent hash and the block's tokens: equal
// hashes mean equal prefixes up to and including this block.
func hashBlock(parent uint64, toks []int32) uint64 {
	return fnvBlock(fnvOffset, parent, toks)
}

// hashRoot is hashBlock for a chain's first block (parent 0, or a tail's
// salt), started from FNV's offset xor the cache salt. Each FNV step (xor
// a byte, multiply by an odd prime) is a bijection of the state, so for the
// same tokens two salts always give two hashes: calls of different salts
// share no first block, and their later blocks hash different parents
// (meeting only by a 64-bit collision, as two prefixes can). Salt 0 is
// hashBlock.
func hashRoot(salt, parent uint64, toks []int32) uint64 {
	return fnvBlock(fnvOffset^salt, parent, toks)
}

func fnvBlock(h, parent uint64, toks []int32) uint64 {
	for i := 0; i < 8; i++ {
		h ^= (parent >> (8 * i)) & 0xff
		h *= fnvPrime
	}
	for _, t := range toks {
		u := uint32(t)
		for i := 0; i < 4; i++ {
			h ^= uint64((u >> (8 * i)) & 0xff)
			h *= fnvPrime
		}
	}
	return h
}
