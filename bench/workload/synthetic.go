package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/pitstop-llm/pitstop/bench/workload/infercept"
)

// Synthetic agent workloads shaped after the Autellix evaluation (§6.1, Fig. 11): ShareGPT
// chats, BFCL ReAct loops and LATS Monte-Carlo tree searches. Every count is drawn from a
// discretised lognormal calibrated to the paper's mean (after rounding and the cap), one draw
// per equal-probability stratum, so a population of a few hundred programs has the stated
// mean and a heavy tail for every seed. Pauses and tool durations are resampled from the
// measured api_time values of the InferCept multi-API set. Everything is a function of the seed
// (math/rand/v2 PCG).
//
// How "prefill" maps onto the calls: a later call continues its parent's context
// (ContinueParent), so its prompt is the history plus its NewTokens.
//   - chat: the Autellix mean (256) is the new input of a turn, the user's message: NewTokens.
//     A turn's whole prompt is longer, carrying the conversation so far (256 tokens cannot
//     hold a history of 277-token answers).
//   - react, mcts: the Autellix mean (735.06, 467.2) is the whole prompt of a call, dominated by
//     the system prompt with tool signatures (BFCL) or the task prompt (LATS). The first call's
//     NewTokens (that prompt) is calibrated so the mean whole prompt over all calls hits the
//     target given the history the loop or tree accumulates; later calls' NewTokens are tool
//     results and short instructions.

// Population sizes of the synthetic workloads (programs are sampled from these).
const (
	ChatPrograms  = 400
	ReactPrograms = 400
	MCTSPrograms  = 200
	MixedPerKind  = 150 // mixed: this many of each of chat, react and mcts
)

// Targets from Autellix §6.1 (Fig. 11).
const (
	chatCallsMean, chatCallsMax       = 6.66, 80
	chatPrefillMean, chatDecodeMean   = 256, 277
	reactCallsMean, reactCallsMax     = 10.75, 70
	reactPrefillMean, reactDecodeMean = 735.06, 34.14
	mctsCallsMean                     = 159.7
	mctsPrefillMean, mctsDecodeMean   = 467.2, 72.6
)

// Shape choices (ours; Autellix gives means and maxima only).
const (
	chatCallsSigma   = 1.0 // ShareGPT conversations: long tail, median about 4 turns
	chatTokensSigma  = 1.0
	reactCallsSigma  = 0.7 // "less long-tailed" than ShareGPT
	reactDecodeSigma = 0.6
	mctsCallsSigma   = 0.5 // LATS stops when solved or out of budget
	mctsCallsMin     = 12
	mctsCallsMax     = 1000
	mctsDecodeSigma  = 0.5
	firstPromptSigma = 0.5 // the system/task prompt of react and mcts programs
	minFirstPrompt   = 64
	mctsWidth        = 5  // LATS expands 5 children of the selected node in parallel
	mctsMaxDepth     = 2  // nodes at this depth are not expanded (see MCTS)
	mctsMaxRollout   = 3  // simulation steps after each expansion: uniform in [0, 3]
	mctsStepPrompt   = 16 // "Thought k:" instruction appended before each generation
	mctsValuePrompt  = 48 // the value instruction of an evaluation call
)

// toolSample is one measured pause of the InferCept multi-API set.
type toolSample struct {
	tool   string
	time   float64
	tokens int
}

type toolPools struct {
	human []toolSample // "human-think": ShareGPT think times (capped at 60 s by the set)
	tools []toolSample // every tool but human-think: math, qa, tts, image-gen, virtual-env
	qa    []toolSample // Wikipedia lookups: what LATS on HotpotQA calls
}

var loadPools = sync.OnceValues(func() (*toolPools, error) {
	w, err := LoadInfercept(true, InferceptOptions{KeepTrailingTools: true})
	if err != nil {
		return nil, err
	}
	p := &toolPools{}
	for _, pr := range w.Programs {
		for _, c := range pr.Calls {
			for _, s := range c.Segments {
				if s.Tool == "" {
					continue
				}
				t := toolSample{s.Tool, s.ToolTime, s.ToolReturn}
				switch s.Tool {
				case infercept.ToolHuman:
					p.human = append(p.human, t)
				case infercept.ToolQA:
					p.qa = append(p.qa, t)
					p.tools = append(p.tools, t)
				default:
					p.tools = append(p.tools, t)
				}
			}
		}
	}
	if len(p.human) == 0 || len(p.tools) == 0 || len(p.qa) == 0 {
		return nil, fmt.Errorf("infercept pools: %d human, %d tool, %d qa samples", len(p.human), len(p.tools), len(p.qa))
	}
	return p, nil
})

func pick(r *rand.Rand, pool []toolSample) toolSample { return pool[r.IntN(len(pool))] }

// Chat is the ShareGPT chatbot workload (Autellix): ChatPrograms single-thread programs;
// calls per program mean 6.66 (lognormal σ 1, cap 80); per call NewTokens mean 256 (the
// user's turn, σ 1, cap 4,096) and Decode mean 277 (σ 1, cap 2,048) in one segment; every call
// after the first continues the previous one after a human think time (ThinkTool
// "human-think") resampled from the InferCept set's ShareGPT think times (N and N_M ids, at
// most 60 s).
func Chat(seed int64) (*Workload, error) {
	ps, err := genChat(newRand(seed, "chat"), ChatPrograms)
	if err != nil {
		return nil, err
	}
	return finish(&Workload{Name: "chat", Description: "synthetic ShareGPT-like chats (Autellix stats: 6.66 calls, 256 prefill, 277 decode per call)", Programs: ps})
}

func genChat(r *rand.Rand, n int) ([]Program, error) {
	pools, err := loadPools()
	if err != nil {
		return nil, err
	}
	counts := newLognorm(chatCallsMean, chatCallsSigma, 1, chatCallsMax).draws(r, n)
	total := sum(counts)
	news := newLognorm(chatPrefillMean, chatTokensSigma, 1, 4096).draws(r, total)
	decs := newLognorm(chatDecodeMean, chatTokensSigma, 1, 2048).draws(r, total)
	ps := make([]Program, n)
	k := 0
	for i := range ps {
		p := Program{ID: fmt.Sprintf("chat-%04d", i)}
		for j := range counts[i] {
			c := Call{ID: fmt.Sprintf("c%d", j), Thread: "main", NewTokens: news[k], Segments: []Segment{{Decode: decs[k]}}}
			if j > 0 {
				t := pick(r, pools.human)
				c.Parents, c.ContinueParent = []string{p.Calls[j-1].ID}, true
				c.ThinkTime, c.ThinkTool = t.time, t.tool
			}
			p.Calls = append(p.Calls, c)
			k++
		}
		ps[i] = p
	}
	return ps, nil
}

// React is the BFCL ReAct workload (Autellix): ReactPrograms single-thread programs; calls per
// program mean 10.75 (lognormal σ 0.7, cap 70); Decode mean 34.14 (the function call, σ 0.6,
// cap 512). Between two calls the client runs a tool: ThinkTime, ThinkTool and the next call's
// NewTokens (the tool's result) are one measured tool call of the InferCept multi-API set
// (math, qa, tts, image-gen, virtual-env; not human-think). The first call's NewTokens (system
// prompt, tool signatures, query; lognormal σ 0.5) is calibrated so the whole prompt averages
// 735.06 tokens over all calls.
func React(seed int64) (*Workload, error) {
	ps, note, err := genReact(newRand(seed, "react"), ReactPrograms)
	if err != nil {
		return nil, err
	}
	return finish(&Workload{Name: "react", Description: "synthetic BFCL-like ReAct loops (Autellix stats: 10.75 calls, 735 prefill, 34 decode per call), client-side tools between calls", Programs: ps, Notes: []string{note}})
}

func genReact(r *rand.Rand, n int) ([]Program, string, error) {
	pools, err := loadPools()
	if err != nil {
		return nil, "", err
	}
	counts := newLognorm(reactCallsMean, reactCallsSigma, 1, reactCallsMax).draws(r, n)
	decs := newLognorm(reactDecodeMean, reactDecodeSigma, 1, 512).draws(r, sum(counts))
	ps := make([]Program, n)
	k := 0
	for i := range ps {
		p := Program{ID: fmt.Sprintf("react-%04d", i)}
		for j := range counts[i] {
			c := Call{ID: fmt.Sprintf("c%d", j), Thread: "main", Segments: []Segment{{Decode: decs[k]}}}
			if j > 0 {
				t := pick(r, pools.tools)
				c.Parents, c.ContinueParent = []string{p.Calls[j-1].ID}, true
				c.ThinkTime, c.ThinkTool, c.NewTokens = t.time, t.tool, t.tokens
			}
			p.Calls = append(p.Calls, c)
			k++
		}
		ps[i] = p
	}
	return ps, calibrateFirstPrompt(r, ps, reactPrefillMean), nil
}

// MCTS is the LATS workload (Autellix: 159.7 calls per program, 467.2 prefill, 72.6 decode):
// MCTSPrograms DAG programs, each a Monte-Carlo tree search as LATS runs it on HotpotQA.
// The number of calls is drawn first (lognormal mean 159.7, σ 0.5, in [12, 1000]) and the search
// stops there. The root call reads the task; then each iteration
//
//  1. selects a node of the frontier (uniformly; the root again once the frontier is empty),
//  2. expands it: 5 parallel calls (threads b0..b4) continuing the node's context with its
//     observation and a 16-token instruction; they start after the node's Wikipedia lookup
//     (ThinkTool "qa", time and observation size resampled from the InferCept qa tool calls)
//     unless that observation is already known, and after every evaluation and simulation
//     step of the previous iteration (selection needs their values),
//  3. evaluates each child: a call continuing the child after its own lookup, with a
//     48-token value instruction,
//  4. simulates from one child (the best): 0 to 3 sequential calls, each after a lookup,
//
// and the next iteration waits for steps 3 and 4 (backpropagation). Nodes at depth 2 are not
// expanded, so the tree is two levels deep and simulations reach three levels further: every
// level adds about 150 tokens of history (decode, observation, instruction), and with deeper
// trees the history alone would exceed the 467-token mean prompt. Decode mean 72.6 (σ 0.5, cap 1,024). The root's NewTokens (the task prompt)
// is calibrated so the whole prompt averages 467.2 tokens over all calls.
func MCTS(seed int64) (*Workload, error) {
	ps, note, err := genMCTS(newRand(seed, "mcts"), MCTSPrograms)
	if err != nil {
		return nil, err
	}
	return finish(&Workload{Name: "mcts", Description: "synthetic LATS tree searches (Autellix stats: 159.7 calls, 467 prefill, 72.6 decode per call), parallel expansion threads", Programs: ps, Notes: []string{note}})
}

type mctsNode struct {
	id, thread string
	depth      int
	obs        toolSample // the lookup this node's action triggers
	observed   bool       // a call already waited for obs
}

func genMCTS(r *rand.Rand, n int) ([]Program, string, error) {
	pools, err := loadPools()
	if err != nil {
		return nil, "", err
	}
	targets := newLognorm(mctsCallsMean, mctsCallsSigma, mctsCallsMin, mctsCallsMax).draws(r, n)
	decs := newLognorm(mctsDecodeMean, mctsDecodeSigma, 1, 1024).draws(r, sum(targets))
	ps := make([]Program, n)
	for i := range ps {
		p := Program{ID: fmt.Sprintf("mcts-%04d", i), Calls: make([]Call, 0, targets[i])}
		add := func(c Call) {
			c.Segments = []Segment{{Decode: decs[0]}}
			decs = decs[1:]
			p.Calls = append(p.Calls, c)
		}
		// after returns the pause before a call that needs node's observation.
		after := func(c *Call, node *mctsNode) {
			c.NewTokens += node.obs.tokens
			if !node.observed {
				c.ThinkTime, c.ThinkTool = node.obs.time, node.obs.tool
			}
		}
		root := &mctsNode{id: "root", thread: "main", obs: pick(r, pools.qa)}
		add(Call{ID: root.id, Thread: root.thread})
		frontier := []*mctsNode{root}
		var deps []string
		for iter := 0; len(p.Calls) < targets[i]; iter++ {
			if len(frontier) == 0 {
				frontier = append(frontier, root)
			}
			si := r.IntN(len(frontier))
			sel := frontier[si]
			frontier = slices.Delete(frontier, si, si+1)
			parents := append([]string{sel.id}, slices.DeleteFunc(slices.Clone(deps), func(s string) bool { return s == sel.id })...)
			var kids []*mctsNode
			for j := 0; j < mctsWidth && len(p.Calls) < targets[i]; j++ {
				kid := &mctsNode{id: fmt.Sprintf("x%d.%d", iter, j), thread: fmt.Sprintf("b%d", j), depth: sel.depth + 1, obs: pick(r, pools.qa)}
				c := Call{ID: kid.id, Thread: kid.thread, Parents: slices.Clone(parents), ContinueParent: true, NewTokens: mctsStepPrompt}
				after(&c, sel)
				add(c)
				kids = append(kids, kid)
			}
			sel.observed = true
			deps = deps[:0]
			for _, kid := range kids {
				if len(p.Calls) >= targets[i] {
					break
				}
				c := Call{ID: "v" + kid.id[1:], Thread: kid.thread, Parents: []string{kid.id}, ContinueParent: true, NewTokens: mctsValuePrompt}
				after(&c, kid)
				kid.observed = true
				add(c)
				deps = append(deps, c.ID)
			}
			if len(kids) > 0 {
				prev := kids[r.IntN(len(kids))]
				steps := r.IntN(mctsMaxRollout + 1)
				for s := 0; s < steps && len(p.Calls) < targets[i]; s++ {
					step := &mctsNode{id: fmt.Sprintf("s%d.%d", iter, s), thread: prev.thread, obs: pick(r, pools.qa)}
					c := Call{ID: step.id, Thread: step.thread, Parents: []string{prev.id}, ContinueParent: true, NewTokens: mctsStepPrompt}
					if s == 0 {
						c.Parents = append(c.Parents, deps...) // the best child is known once all are evaluated
					}
					after(&c, prev)
					prev.observed = true
					add(c)
					prev = step
				}
				if steps > 0 {
					deps = append(deps, prev.id)
				}
			}
			for _, kid := range kids {
				if kid.depth < mctsMaxDepth {
					frontier = append(frontier, kid)
				}
			}
		}
		ps[i] = p
	}
	return ps, calibrateFirstPrompt(r, ps, mctsPrefillMean), nil
}

// calibrateFirstPrompt sets each program's first call's NewTokens (the system or task prompt,
// on which every later call's context builds) so that the whole prompt averages target tokens
// over all calls of the population: the mean history the calls carry is measured, the rest
// is drawn per program (lognormal σ 0.5, at least 64 tokens) and rescaled to the exact
// call-weighted mean. It returns a note saying what it chose.
func calibrateFirstPrompt(r *rand.Rand, ps []Program, target float64) string {
	calls, hist := 0, 0
	for i := range ps {
		prompt, _ := ps[i].Contexts()
		calls += len(prompt)
		hist += sum(prompt)
	}
	mean := float64(hist) / float64(calls)
	want := max(target-mean, minFirstPrompt)
	draws := newLognorm(want, firstPromptSigma, minFirstPrompt/2, 8192).draws(r, len(ps))
	weighted := 0
	for i := range ps {
		weighted += draws[i] * len(ps[i].Calls)
	}
	scale := want * float64(calls) / float64(weighted)
	for i := range ps {
		ps[i].Calls[0].NewTokens += max(int(math.Round(float64(draws[i])*scale)), minFirstPrompt/2)
	}
	note := fmt.Sprintf("first-call prompt calibrated to a call-weighted mean of %.0f tokens: calls carry %.0f tokens of history on average, for a whole-prompt mean of %.1f", want, mean, target)
	if target-mean < minFirstPrompt {
		note += fmt.Sprintf(" (not reachable: the first prompt was held at %d tokens)", minFirstPrompt)
	}
	return note
}

// Mixed is equal parts of the three agent workloads (Autellix): MixedPerKind programs each of
// chat, react and mcts, drawn as those workloads draw them (with their own streams of this
// seed) and interleaved. Equal parts count programs, as Autellix samples programs: most calls
// come from the mcts programs.
func Mixed(seed int64) (*Workload, error) {
	c, err := genChat(newRand(seed, "mixed/chat"), MixedPerKind)
	if err != nil {
		return nil, err
	}
	re, reNote, err := genReact(newRand(seed, "mixed/react"), MixedPerKind)
	if err != nil {
		return nil, err
	}
	m, mNote, err := genMCTS(newRand(seed, "mixed/mcts"), MixedPerKind)
	if err != nil {
		return nil, err
	}
	ps := make([]Program, 0, 3*MixedPerKind)
	for i := range MixedPerKind {
		ps = append(ps, c[i], re[i], m[i])
	}
	return finish(&Workload{Name: "mixed", Description: "equal parts (by program) of chat, react and mcts", Programs: ps,
		Notes: []string{"react: " + reNote, "mcts: " + mNote}})
}

func finish(w *Workload) (*Workload, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}
