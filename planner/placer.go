package planner

import (
	"strconv"
	"time"

	"github.com/pitstop-llm/pitstop/cluster"
)

// DefaultBalancer places a stage's requests on a model's DP replicas
// unless told otherwise.
const DefaultBalancer = "least-tokens"

// placer puts a model's requests on its DP replicas with a cluster
// balancer, in the replay and in the Runner alike. The balancer sees the
// work placed on each replica and not yet finished (the rounds in flight:
// their prompt and output tokens), which is what both know of a replica
// without reading its engine, so a replay and a run decide the same way.
type placer struct {
	bal   cluster.Balancer
	state cluster.State
}

// newPlacer makes a placer over n replicas with the named balancer.
func newPlacer(balancer string, n int) (*placer, error) {
	b, err := cluster.New(balancer, cluster.Options{})
	if err != nil {
		return nil, err
	}
	return &placer{bal: b, state: cluster.State{Replicas: make([]cluster.Replica, n)}}, nil
}

// place picks the replica for round 0 (or the first round left) of request
// req, due at now, with prompt and out tokens, and counts it there.
func (p *placer) place(now time.Duration, req, prompt, out int) int {
	p.state.Now = now
	c := cluster.Call{Program: strconv.Itoa(req), PromptTokens: prompt, PredictedDecode: out}
	i := p.bal.Pick(&c, &p.state)
	if i < 0 || i >= len(p.state.Replicas) {
		i = 0 // a balancer out of range: the first replica still serves
	}
	p.add(i, prompt, out)
	return i
}

// add counts a round of prompt and out tokens on replica i.
func (p *placer) add(i, prompt, out int) {
	r := &p.state.Replicas[i]
	r.WaitingCalls++
	r.WaitingTokens += prompt + out
}

// done uncounts a finished round from replica i; last tells the balancer
// the request has no round left.
func (p *placer) done(i, req, prompt, out int, last bool) {
	r := &p.state.Replicas[i]
	r.WaitingCalls--
	r.WaitingTokens -= prompt + out
	if !last {
		return
	}
	if e, ok := p.bal.(cluster.ProgramEnder); ok {
		e.ProgramDone(strconv.Itoa(req))
	}
}
