package planner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pitstop-llm/pitstop/engine/sim"
)

// App is an application graph ready to plan: models in topological order,
// self-loops fused into their node, each model's requests sampled.
type App struct {
	Name   string
	Models []*Model // topological order: a model's inputs come before it
}

// Model is one node: its plans' profiles, its sampled requests and the
// requests of other models it waits for.
type Model struct {
	Name     string
	idx      int // position in App.Models
	tps      []int
	byTP     map[int]planProfile // every allowed degree, and the profile's own
	baseTP   int                 // the degree the profile was measured at
	maxDP    int
	longest  int     // longest sequence (prompt + output) of any round
	flopsTok float64 // FLOPs per token: 2 × parameters (weights at 2 bytes each)
	inputs   []int   // models it reads from (not itself)
	selfLoop bool
	reqs     []request
	spec     ModelSpec
}

// request is one request of a model: a self-loop's request has several
// rounds, each a new prompt chunk plus the previous round's output.
type request struct {
	chunk []int    // own prompt tokens per round
	out   []int    // output tokens per round
	deps  []reqRef // requests of other models whose outputs round 0 reads
}

type reqRef struct{ model, req int }

// Spec is the model's entry in the application file.
func (m *Model) Spec() ModelSpec { return m.spec }

// Requests is the number of requests the model answers.
func (m *Model) Requests() int { return len(m.reqs) }

// prompt is the prompt length of round r of request i.
func (a *App) prompt(m *Model, i, r int) int {
	q := &m.reqs[i]
	n := q.chunk[r]
	if r > 0 {
		return n + q.out[r-1]
	}
	for _, d := range q.deps {
		u := &a.Models[d.model].reqs[d.req]
		n += u.out[len(u.out)-1]
	}
	return n
}

// maxRequests bounds a model's requests: a search replays every one of
// them many times.
const maxRequests = 1_000_000

// BuildApp checks the graph, loads and derives the profiles and samples the
// requests with seed. Every error names the model it is about.
func BuildApp(spec *AppSpec, dir string, seed uint64) (*App, error) {
	byName := map[string]int{}
	for i, ms := range spec.Models {
		if ms.Name == "" {
			return nil, fmt.Errorf("model %d has no name", i+1)
		}
		if _, dup := byName[ms.Name]; dup {
			return nil, fmt.Errorf("model %s: defined twice", ms.Name)
		}
		byName[ms.Name] = i
	}
	order, err := topoOrder(spec, byName)
	if err != nil {
		return nil, err
	}
	a := &App{Name: spec.Name}
	pos := map[string]int{}
	for _, si := range order {
		ms := spec.Models[si]
		m, err := newModel(ms, dir, byName)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", ms.Name, err)
		}
		m.idx = len(a.Models)
		for _, in := range ms.Inputs {
			if in.From != ms.Name {
				m.inputs = append(m.inputs, pos[in.From])
			}
		}
		pos[ms.Name] = m.idx
		a.Models = append(a.Models, m)
		if err := a.sample(m, dir, rand.New(rand.NewPCG(seed, uint64(si)+1))); err != nil {
			return nil, fmt.Errorf("model %s: %w", ms.Name, err)
		}
	}
	return a, nil
}

// topoOrder orders the models so that inputs come first; a self-loop is
// fused into its node (SamuLLM §4.2), any other cycle is an error naming
// the models on it.
func topoOrder(spec *AppSpec, byName map[string]int) ([]int, error) {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(spec.Models))
	var order []int
	var path []string
	var visit func(i int) error
	visit = func(i int) error {
		ms := &spec.Models[i]
		switch state[i] {
		case done:
			return nil
		case onPath:
			at := slices.Index(path, ms.Name)
			return fmt.Errorf("model %s: on a cycle %s → %s (only a model's loop onto itself is allowed: it is fused into one node)", ms.Name, strings.Join(path[at:], " → "), ms.Name)
		}
		state[i] = onPath
		path = append(path, ms.Name)
		for _, in := range ms.Inputs {
			j, ok := byName[in.From]
			if !ok {
				return fmt.Errorf("model %s: input from unknown model %q", ms.Name, in.From)
			}
			if j == i {
				continue // self-loop: fused
			}
			if err := visit(j); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[i] = done
		order = append(order, i)
		return nil
	}
	for i := range spec.Models {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func newModel(ms ModelSpec, dir string, byName map[string]int) (*Model, error) {
	if ms.Profile == "" {
		return nil, fmt.Errorf("no profile (valid: %s, or a .json profile)", strings.Join(sim.ProfileNames(), ", "))
	}
	name := ms.Profile
	if strings.HasSuffix(name, ".json") && !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	base, err := sim.LoadProfile(name)
	if err != nil {
		return nil, err
	}
	switch {
	case !(ms.WeightsBytes > 0) || !(ms.LoadS >= 0) || math.IsInf(ms.WeightsBytes, 0) || math.IsInf(ms.LoadS, 0):
		return nil, fmt.Errorf("weights_bytes must be positive and load_s not negative (got %g, %g)", ms.WeightsBytes, ms.LoadS)
	case ms.Requests < 0 || ms.Requests > maxRequests:
		return nil, fmt.Errorf("requests must be within 0..%d (0: one per input request), got %d", maxRequests, ms.Requests)
	case ms.MaxOutput < 0 || ms.MaxDP < 0:
		return nil, fmt.Errorf("max_output and max_dp must not be negative (got %d, %d)", ms.MaxOutput, ms.MaxDP)
	}
	for _, in := range ms.Inputs {
		if !(in.Share >= 0 && in.Share <= 1) || !(in.Skip >= 0 && in.Skip < 1) {
			return nil, fmt.Errorf("input from %s: share must be within 0..1 and skip within 0..1 (excluded), got %g and %g", in.From, in.Share, in.Skip)
		}
	}
	baseTP := max(ms.ProfileTP, 1)
	tps := ms.TP
	if len(tps) == 0 {
		tps = []int{baseTP}
	}
	tps = slices.Clone(tps)
	slices.Sort(tps)
	tps = slices.Compact(tps)
	m := &Model{Name: ms.Name, tps: tps, byTP: map[int]planProfile{}, maxDP: ms.MaxDP, flopsTok: ms.WeightsBytes, spec: ms}
	load := time.Duration(ms.LoadS * float64(time.Second))
	for _, tp := range tps {
		p, l, err := DeriveTP(base, baseTP, tp, ms.WeightsBytes, load)
		if err != nil {
			return nil, err
		}
		m.byTP[tp] = planProfile{profile: p, load: l, scale: tpScale(tp / baseTP)}
	}
	if _, ok := m.byTP[baseTP]; !ok {
		m.byTP[baseTP] = planProfile{profile: base, load: load, scale: 1} // replays of other degrees scale it
	}
	m.baseTP = baseTP
	for _, in := range ms.Inputs {
		if in.From == ms.Name {
			m.selfLoop = true
			if ms.RoundsLengths == "" {
				return nil, fmt.Errorf("a self-loop needs rounds_lengths (samples of rounds per request)")
			}
		}
	}
	return m, nil
}

func (a *App) byName(name string) *Model {
	for _, m := range a.Models {
		if m.Name == name {
			return m
		}
	}
	return nil
}
