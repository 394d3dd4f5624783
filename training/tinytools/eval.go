package tinytools

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// LoadedModel is a model directory: weights, tokenizer and the tools it was
// trained with.
type LoadedModel struct {
	Dir   string
	Model *Model
	Tok   *tokenizer.Tokenizer
	Data  *Data
	stop  map[int32]bool

	mu        sync.Mutex
	prefixes  map[int]*Session
	prefixIDs map[int][]int32

	// Reference, when set, is another forward pass of the same weights
	// (models/llama's): it returns the logits of every position. Evaluate
	// replays the first EvalOptions.RefN dialogues through it and checks
	// that it picks the same greedy tokens.
	Reference func(tokens []int32) ([][]float32, error)

	// Served, when set, opens each dialogue's decoder instead of Model's
	// forward pass (NewServed).
	Served func() (Conversation, error)
}

// Load reads a model directory written by Train.
func Load(dir string) (*LoadedModel, error) {
	w, err := LoadModelDir(dir)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, err
	}
	if tok.VocabSize() > w.Cfg.Vocab {
		return nil, fmt.Errorf("tinytools: tokenizer has %d tokens, model only %d", tok.VocabSize(), w.Cfg.Vocab)
	}
	ts, err := NewToolset()
	if err != nil {
		return nil, err
	}
	lm := &LoadedModel{Dir: dir, Model: NewModel(w), Tok: tok, Data: NewData(tok, ts), stop: map[int32]bool{}}
	for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
		if id, ok := tok.TokenID(s); ok {
			lm.stop[id] = true
		}
	}
	return lm, nil
}

// Turn is what the model wrote in one assistant turn.
type Turn struct {
	Text   string      // decoded, without the stop token
	Parsed chat.Result // Hermes parse of Text
}

// Transcript is one evaluated dialogue.
type Transcript struct {
	Index     int      `json:"index"`
	Kind      string   `json:"kind"`
	Variant   int      `json:"variant"`
	User      string   `json:"user"`
	Want      []string `json:"want_calls,omitempty"`
	First     string   `json:"first_turn"`
	Results   []string `json:"tool_results,omitempty"`
	Final     string   `json:"final_turn,omitempty"`
	RightTool bool     `json:"right_tool"`
	ExactArgs bool     `json:"exact_args"`
	Answered  bool     `json:"answer_has_result"`
	NoCall    bool     `json:"no_call"`

	tokens    []int32 // the whole dialogue as fed
	generated []bool  // tokens[i] was chosen by the model
	// Reference check (EvalOptions.RefN): whether the reference forward
	// picks the same greedy token at every generated position, and the
	// largest difference of the two forwards' logits over the dialogue.
	RefChecked bool    `json:"ref_checked,omitempty"`
	RefAgree   bool    `json:"ref_agree,omitempty"`
	RefMaxDiff float64 `json:"ref_max_logit_diff,omitempty"`
}

// EvalOptions configures Evaluate.
type EvalOptions struct {
	N       int
	Seed    int64 // the training seed: prompts come from its held-out stream
	RefN    int   // dialogues to replay through LoadedModel.Reference
	Workers int
	MaxNew  int // tokens per turn
	// Train, when set, says which training dialogues the model saw:
	// Evaluate reports how many held-out questions appear verbatim among
	// them.
	Train *TrainOptions
	// Variant, when >= 0, evaluates that prompt variant only (-1: drawn by
	// weight, as in training).
	Variant int
	Log     io.Writer
}

// EvalReport is Evaluate's result.
type EvalReport struct {
	N           int               `json:"n"`
	NeedTool    int               `json:"need_tool"`
	NoTool      int               `json:"no_tool"`
	RightTool   int               `json:"right_tool"`
	ExactArgs   int               `json:"exact_args"`
	Answered    int               `json:"answer_has_result"`
	NoCall      int               `json:"no_call_when_none_needed"`
	DirectExact int               `json:"direct_answer_exact"`
	ByKind      map[string][4]int `json:"by_kind"` // kind -> n, right tool, exact args, answer has result (no-call for none)
	SeenInTrain int               `json:"held_out_questions_seen_in_training"`
	// The tool metrics over the held-out prompts whose question never
	// occurs in training: need tool, right tool, exact args, answered.
	Unseen        [4]int       `json:"unseen_need_tool_right_exact_answered"`
	TrainExamples int          `json:"train_examples_checked"`
	Seconds       float64      `json:"seconds"`
	RefChecked    int          `json:"reference_checked"`
	RefAgree      int          `json:"reference_agree"`
	RefMaxDiff    float64      `json:"reference_max_logit_diff"`
	RefTokens     int          `json:"reference_generated_tokens"`
	Transcripts   []Transcript `json:"transcripts,omitempty"`
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Print writes the report as a table.
func (r *EvalReport) Print(w io.Writer) {
	fmt.Fprintf(w, "held-out prompts: %d (%d need a tool, %d need none); %.1fs\n", r.N, r.NeedTool, r.NoTool, r.Seconds)
	fmt.Fprintf(w, "  well-formed tool call with the right tool   %4d/%-4d %6.1f%%  (goal ≥ 95%%)\n", r.RightTool, r.NeedTool, pct(r.RightTool, r.NeedTool))
	fmt.Fprintf(w, "  exactly right arguments                     %4d/%-4d %6.1f%%  (goal ≥ 90%%)\n", r.ExactArgs, r.NeedTool, pct(r.ExactArgs, r.NeedTool))
	fmt.Fprintf(w, "  final answer contains the tool's result     %4d/%-4d %6.1f%%  (goal ≥ 90%%)\n", r.Answered, r.NeedTool, pct(r.Answered, r.NeedTool))
	fmt.Fprintf(w, "  no tool call when none is needed            %4d/%-4d %6.1f%%  (goal ≥ 90%%)\n", r.NoCall, r.NoTool, pct(r.NoCall, r.NoTool))
	fmt.Fprintf(w, "  direct answer exactly as in the corpus      %4d/%-4d %6.1f%%\n", r.DirectExact, r.NoTool, pct(r.DirectExact, r.NoTool))
	kinds := make([]string, 0, len(r.ByKind))
	for k := range r.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "  by kind (n: right tool / exact args / answer has result; none: no call):\n")
	for _, k := range kinds {
		v := r.ByKind[k]
		if k == KindNone {
			fmt.Fprintf(w, "    %-13s %4d: no call %5.1f%%\n", k, v[0], pct(v[1], v[0]))
			continue
		}
		fmt.Fprintf(w, "    %-13s %4d: %5.1f%% / %5.1f%% / %5.1f%%\n", k, v[0], pct(v[1], v[0]), pct(v[2], v[0]), pct(v[3], v[0]))
	}
	if r.RefChecked > 0 {
		fmt.Fprintf(w, "  models/llama reference forward: same greedy tokens in %d/%d replayed dialogues (%d generated tokens); largest logit difference %.2g\n",
			r.RefAgree, r.RefChecked, r.RefTokens, r.RefMaxDiff)
	}
	if r.TrainExamples > 0 {
		fmt.Fprintf(w, "  held-out questions that also occur verbatim among the %d training dialogues: %d/%d (%.1f%%)\n",
			r.TrainExamples, r.SeenInTrain, r.N, pct(r.SeenInTrain, r.N))
		u := r.Unseen
		fmt.Fprintf(w, "  on the %d tool prompts whose question never occurs in training: right tool %.1f%%, exact args %.1f%%, answer has result %.1f%%\n",
			u[0], pct(u[1], u[0]), pct(u[2], u[0]), pct(u[3], u[0]))
	}
}

// sameArgs compares two JSON argument objects by value.
func sameArgs(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Run plays one dialogue the way the server does: render the prompt, decode
// the first turn, parse its tool calls, run them, append the results with
// the template and decode the final turn.
func (lm *LoadedModel) Run(e Example, maxNew int) (Transcript, error) {
	tr := Transcript{Kind: e.Kind, Variant: e.Variant, User: e.User}
	for _, c := range e.Calls {
		tr.Want = append(tr.Want, c.Name+" "+c.Arguments)
	}
	v := Variants[e.Variant]
	tpl := v.template()
	prompt, err := e.PromptSpans(lm.Data.TS)
	if err != nil {
		return tr, err
	}
	ids, err := prompt.Encode(lm.Tok)
	if err != nil {
		return tr, err
	}
	tr.tokens = append(tr.tokens, ids...)
	tr.generated = make([]bool, len(ids))
	record := func(toks []int32, gen bool) {
		tr.tokens = append(tr.tokens, toks...)
		for range toks {
			tr.generated = append(tr.generated, gen)
		}
	}
	conv, err := lm.conversation(e.Variant)
	if err != nil {
		return tr, err
	}
	defer conv.Close()
	out, err := conv.Turn(ids, maxNew)
	if err != nil {
		return tr, err
	}
	record(out, true)
	first := lm.Tok.Decode(trimStop(out, lm.stop))
	tr.First = first
	res := chat.Parse(tpl, first, chat.WithIDs(func(i int) string { return fmt.Sprintf("call_%d", i) }))
	need := len(e.Calls) > 0
	if !need {
		tr.NoCall = len(res.ToolCalls) == 0 && len(res.Errors) == 0 && !strings.Contains(first, "<tool_call>")
		return tr, nil
	}
	if len(res.Errors) == 0 && len(res.ToolCalls) == len(e.Calls) {
		tr.RightTool, tr.ExactArgs = true, true
		for i, c := range res.ToolCalls {
			if c.Name != e.Calls[i].Name {
				tr.RightTool = false
			}
			if c.Name != e.Calls[i].Name || !sameArgs(c.Arguments, e.Calls[i].Arguments) {
				tr.ExactArgs = false
			}
		}
	}
	if len(res.ToolCalls) == 0 {
		return tr, nil
	}
	results := lm.Data.TS.Run(e.Now, res.ToolCalls)
	var msgs []chat.Message
	allOK := true
	var keys []string
	for i, r := range results {
		tr.Results = append(tr.Results, r.Content)
		msgs = append(msgs, chat.Message{Role: chat.RoleTool, Content: r.Content, ToolCallID: res.ToolCalls[i].ID, Name: r.Name})
		if r.IsError {
			allOK = false
		}
		keys = append(keys, resultKey(res.ToolCalls[i].Name, r.Content))
	}
	// The turn ended with its stop token, already in the cache; the
	// template's tool-result text follows it.
	if len(out) == 0 || !lm.stop[out[len(out)-1]] {
		return tr, nil // no end of turn: the server would not resume either
	}
	text, err := tpl.RenderToolResultsSpans(msgs, true)
	if err != nil {
		return tr, err
	}
	resumeIDs, err := text.Encode(lm.Tok)
	if err != nil {
		return tr, err
	}
	record(resumeIDs, false)
	out, err = conv.Turn(resumeIDs, maxNew)
	if err != nil {
		return tr, err
	}
	record(out, true)
	tr.Final = lm.Tok.Decode(trimStop(out, lm.stop))
	tr.Answered = allOK && !strings.Contains(tr.Final, "<tool_call>")
	for _, k := range keys {
		if !strings.Contains(tr.Final, k) {
			tr.Answered = false
		}
	}
	return tr, nil
}

func trimStop(ids []int32, stop map[int32]bool) []int32 {
	if n := len(ids); n > 0 && stop[ids[n-1]] {
		return ids[:n-1]
	}
	return ids
}

// prefixSession returns a session holding variant v's shared prompt
// prefix, computed once.
func (lm *LoadedModel) prefixSession(v int) (*Session, []int32, error) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if s, ok := lm.prefixes[v]; ok {
		return s, lm.prefixIDs[v], nil
	}
	p, err := lm.Data.PrefixTokens(v)
	if err != nil {
		return nil, nil, err
	}
	s := lm.Model.NewSession()
	if _, err := s.Feed(p, false); err != nil {
		return nil, nil, err
	}
	if lm.prefixes == nil {
		lm.prefixes, lm.prefixIDs = map[int]*Session{}, map[int][]int32{}
	}
	lm.prefixes[v], lm.prefixIDs[v] = s, p
	return s, p, nil
}

// Evaluate runs N held-out dialogues through the tool loop and counts the
// outcomes.
func (lm *LoadedModel) Evaluate(opt EvalOptions) (*EvalReport, error) {
	t0 := time.Now()
	if opt.MaxNew <= 0 {
		opt.MaxNew = 160
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var err error
	exs := make([]Example, opt.N)
	for i := range exs {
		v := -1
		if opt.Variant >= 0 {
			v = opt.Variant
		}
		if exs[i], err = lm.Data.Gen.Example(opt.Seed, StreamEval, i, v); err != nil {
			return nil, err
		}
	}
	trs := make([]Transcript, opt.N)
	errs := make([]error, opt.N)
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= opt.N {
					return
				}
				trs[i], errs[i] = lm.Run(exs[i], opt.MaxNew)
				trs[i].Index = i
				if n := done.Add(1); opt.Log != nil && n%100 == 0 {
					fmt.Fprintf(opt.Log, "  %d/%d dialogues\n", n, opt.N)
				}
			}
		})
	}
	wg.Wait()
	rep := &EvalReport{N: opt.N, ByKind: map[string][4]int{}}
	for i, tr := range trs {
		if errs[i] != nil {
			return nil, fmt.Errorf("tinytools: dialogue %d: %w", i, errs[i])
		}
		e := exs[i]
		k := rep.ByKind[e.Kind]
		k[0]++
		if len(e.Calls) == 0 {
			rep.NoTool++
			if tr.NoCall {
				rep.NoCall++
				k[1]++
			}
			if strings.TrimSpace(tr.First) == e.Answer {
				rep.DirectExact++
			}
		} else {
			rep.NeedTool++
			if tr.RightTool {
				rep.RightTool++
				k[1]++
			}
			if tr.ExactArgs {
				rep.ExactArgs++
				k[2]++
			}
			if tr.Answered {
				rep.Answered++
				k[3]++
			}
		}
		rep.ByKind[e.Kind] = k
	}
	if lm.Reference != nil && lm.Model != nil {
		for i := range min(opt.RefN, opt.N) {
			if err := lm.checkReference(&trs[i]); err != nil {
				return nil, fmt.Errorf("tinytools: reference replay of dialogue %d: %w", i, err)
			}
			rep.RefChecked++
			if trs[i].RefAgree {
				rep.RefAgree++
			}
			rep.RefMaxDiff = max(rep.RefMaxDiff, trs[i].RefMaxDiff)
			for j, g := range trs[i].generated {
				if g && j > 0 {
					rep.RefTokens++
				}
			}
		}
	}
	rep.Transcripts = trs
	if opt.Train != nil && opt.Train.Steps > 0 && opt.Train.Batch > 0 {
		seen := map[string]bool{}
		for i := range opt.N {
			seen[exs[i].User] = false
		}
		n, err := lm.scanTraining(*opt.Train, seen)
		if err != nil {
			return nil, err
		}
		for i := range opt.N {
			if seen[exs[i].User] {
				rep.SeenInTrain++
				continue
			}
			if len(exs[i].Calls) > 0 {
				tr := trs[i]
				rep.Unseen[0]++
				for j, ok := range []bool{tr.RightTool, tr.ExactArgs, tr.Answered} {
					if ok {
						rep.Unseen[j+1]++
					}
				}
			}
		}
		rep.TrainExamples = n
	}
	rep.Seconds = time.Since(t0).Seconds()
	return rep, nil
}

// scanTraining marks which of the questions in seen occur among the
// training dialogues (regenerated from the seed, as TrainBatch draws them).
func (lm *LoadedModel) scanTraining(o TrainOptions, seen map[string]bool) (int, error) {
	g := lm.Data.Gen
	n := 0
	for step := range o.Steps {
		v := TrainVariant(o.Seed, step, o.ShortFrac(step))
		size := o.FullBatch
		if v == ShortVariant || size <= 0 {
			size = o.Batch
		}
		for j := range size {
			e, err := g.Example(o.Seed, StreamTrain, step*max(o.Batch, o.FullBatch)+j, v)
			if err != nil {
				return 0, err
			}
			n++
			if _, ok := seen[e.User]; ok {
				seen[e.User] = true
			}
		}
	}
	return n, nil
}

// checkReference replays a dialogue through the reference forward (teacher
// forcing the whole dialogue, which is what greedy decoding saw) and checks
// that its argmax is the token this package's forward chose at every
// generated position.
func (lm *LoadedModel) checkReference(tr *Transcript) error {
	toks := tr.tokens
	if len(toks) < 2 {
		return nil
	}
	in := toks[:len(toks)-1]
	ref, err := lm.Reference(in)
	if err != nil {
		return err
	}
	mine, err := lm.Model.NewSession().Feed(in, true)
	if err != nil {
		return err
	}
	V := lm.Model.Config().Vocab
	tr.RefChecked, tr.RefAgree = true, true
	for p, row := range ref {
		if len(row) != V {
			return fmt.Errorf("reference returned %d logits per position, want %d", len(row), V)
		}
		for j, v := range row {
			tr.RefMaxDiff = max(tr.RefMaxDiff, math.Abs(float64(v)-float64(mine[p*V+j])))
		}
		if tr.generated[p+1] && argmax(row) != toks[p+1] {
			tr.RefAgree = false
		}
	}
	return nil
}
