package policy

import (
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// callState is what the policies of this package keep about one call, in
// Sequence.PolicyState (scratch space owned by the policy in use). Each
// policy uses the fields it needs.
type callState struct {
	// segBase is Generated() when the current segment began (arrival or the
	// last resume): the forecast's Decode counts from there.
	segBase int

	// Memory-over-time (lamps, pitstop).
	kind       handling.Kind // handling predicted for the current segment
	kindSet    bool
	starved    bool  // starvation counter reached the threshold: head of the queue until it finishes
	rankedAt   int64 // iteration of the last Priority call
	score      float64
	scoreFor   scoreKey    // the call's shape when score was computed
	rankSample *rankSample // with --pitstop-rank auto: the current segment's scores (rank_choice.go)

	// Attained-service queues (mlfq, plas, atlas, pitstop).
	row      *progRow      // the program's process-table row
	pop      *population   // pitstop: its class's learned statistics (population.go)
	inherit  time.Duration // the program's service when the call arrived (its priority p(c))
	queue    int           // current queue, 0 = highest
	entered  float64       // when it entered its queue, seconds (FCFS key inside the queue)
	qService time.Duration // its service when it entered its queue (quantum accounting)
	waitBase time.Duration // its wait at the segment start or last promotion (β accounting)
	svcBase  time.Duration // its service at the segment start or last promotion
	segWait  time.Duration // its wait when the segment began (process-table accounting)
	segSvc   time.Duration // its service when the segment began

	// SOLA.
	lastTok    time.Duration // time of its last token (or of its resume)
	decodeTime time.Duration // time between its decode tokens, tool pauses excluded
	decodeN    int           // decode tokens counted in decodeTime
	decIdx     int           // its index in SOLA's decoding set, -1 when not in it

	// Pitstop's arrival-order deadline (deadline_lane.go), seconds, and
	// the predicted rest of its own time (device, tool) for the call's
	// shape restFor.
	deadline          float64
	hasDeadline       bool
	shadowOwn         float64 // its own time in the shadow (start to end), seconds
	overdueSeen       bool    // a full re-rank found it waiting past its arrival-order end (laneOverdue)
	restDev, restTool float64
	restFor           scoreKey
	laneEnd           float64 // at its first promotion, its device work's predicted end (promotionLag), seconds
	laneMarked        bool    // promoted once
	laneMeasured      bool    // its lag recorded
	// At the last re-rank that forecast it (laneForecast): the least slack
	// (due less forecast end) of the in-time calls ranked ahead of it, and
	// its own prefill's share of the budget, seconds.
	slackAhead, share float64
	forecastAt        float64 // when that re-rank noted it; 0: never

	// Pitstop's resume rule (resume_paid.go): back from its tool with its
	// KV on the host, not run since.
	backOnHost bool

	// Pitstop's γ-Boost (boost_key.go): the current segment's size
	// distribution for the shape boostFor, its boost for γ version boostVer,
	// and segBase+1 of the segment counted as a job (0: none yet).
	boostPts  []sizePoint
	boostFor  scoreKey
	boostVer  int
	boost     float64
	boostSeg  int
	boostMean float64 // E[S] of that segment when first ranked

	// Continuum.
	ttl float64 // seconds its KV stays pinned during the current tool call; < 0: not pinned
}

// scoreKey is what a cached memory-over-time score depends on besides the
// load: a call whose key is unchanged keeps its score across full re-ranks
// (Refresh), so a re-rank of 10,000 waiting calls does not re-score them.
type scoreKey struct {
	tokens, computed, generated int
	cached                      int // prefix-cached tokens it was scored with (readmitCache)
	state                       engine.State
	valid                       bool
}

func keyOf(s *engine.Sequence) scoreKey {
	return scoreKey{tokens: s.NumTokens(), computed: s.Computed(), generated: s.Generated(), state: s.State(), valid: true}
}

// stateOf returns the call's state, creating it on first use.
func stateOf(s *engine.Sequence) *callState {
	if st, ok := s.PolicyState.(*callState); ok {
		return st
	}
	st := &callState{segBase: s.Generated(), ttl: -1, decIdx: -1}
	s.PolicyState = st
	return st
}

// newSegment resets what belongs to one segment; policies call it on
// EvResumed (a tool returned, the forecast now describes the next segment).
func (st *callState) newSegment(s *engine.Sequence) {
	st.segBase = s.Generated()
	st.kindSet = false
	st.ttl = -1
}

// decodeLeft is the predicted number of tokens the call still generates
// before its next tool call (or its end), at least 1, from the forecast made
// at the start of the segment and the tokens generated since.
func decodeLeft(p engine.Prediction, s *engine.Sequence, st *callState) int {
	return max(p.Decode-(s.Generated()-st.segBase), 1)
}

// segmentOf is the handling model's view of the call's current segment as
// the prediction p describes it: the call's whole context is held from now
// (Prompt), the predicted rest of the pre-tool output, the predicted tool and
// its return, and the predicted output after it (to the end of the call; the
// tools of later segments are not known yet, as in LAMPS's multi-API
// segmentation).
func segmentOf(p engine.Prediction, s *engine.Sequence, st *callState) handling.Segment {
	seg := handling.Segment{Prompt: s.NumTokens(), PreDecode: decodeLeft(p, s, st)}
	if p.HasTool {
		seg.ToolTime = max(p.ToolTime, 0)
		seg.ToolReturn = max(p.ToolReturn, 0)
		seg.PostDecode = max(p.After, 0)
	}
	return seg
}

// loadOf is the engine load the handling model scores in: the calls that ran
// in the last iteration (one token each) and their context.
func loadOf(v *engine.View) handling.Load {
	return handling.Load{RunningTokens: v.Running, OtherRunning: v.RunningCtx}
}

// hostFits reports whether the host tier has room for the call's KV now:
// free, or held by parked KV that would give way to it (View.HostRoom).
func hostFits(v *engine.View, s *engine.Sequence) bool {
	n := s.ResidentBlocks()
	return v.HostFree >= n || v.HostRoom(s) >= n
}

// allowedKinds are the handlings possible now: swap only while the host
// tier has room for the call.
func allowedKinds(v *engine.View, s *engine.Sequence) []handling.Kind {
	if hostFits(v, s) {
		return nil
	}
	return []handling.Kind{handling.Preserve, handling.Discard}
}

// leastWasteEvict is the InferCept eviction of a running call: swap or
// recompute, whichever wastes less with no tool time to wait.
func leastWasteEvict(v *engine.View, s *engine.Sequence) handling.Kind {
	if !hostFits(v, s) {
		return handling.Discard
	}
	sit := v.Situation(s)
	sit.ToolRemaining = 0
	k, _ := handling.Choose(sit, v.Cost, handling.Swap, handling.Discard)
	return k
}

// swapIfRoom evicts by swap while the host tier has room, else recompute
// (Autellix's preemption swaps).
func swapIfRoom(v *engine.View, s *engine.Sequence) handling.Kind {
	if hostFits(v, s) {
		return handling.Swap
	}
	return handling.Discard
}
