package planner

// This file draws an application's requests from its models' eCDFs.

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// sample draws the model's requests: prompt chunks and outputs from the
// eCDFs, rounds for a self-loop, and which input requests each one reads.
func (a *App) sample(m *Model, dir string, r *rand.Rand) error {
	ms := &m.spec
	prompts, err := ecdfFile(dir, ms.PromptLengths, "prompt_lengths")
	if err != nil {
		return err
	}
	outs, err := ecdfFile(dir, ms.OutputLengths, "output_lengths")
	if err != nil {
		return err
	}
	var rounds ECDF
	if m.selfLoop {
		if rounds, err = ecdfFile(dir, ms.RoundsLengths, "rounds_lengths"); err != nil {
			return err
		}
	}
	var edges []InputSpec
	for _, in := range ms.Inputs {
		if in.From != m.Name {
			edges = append(edges, in)
		}
	}
	n := ms.Requests
	if n == 0 && len(edges) > 0 {
		up := a.byName(edges[0].From)
		n = int(math.Round(shareOf(edges[0]) * float64(len(up.reqs))))
	}
	if n <= 0 {
		return fmt.Errorf("requests must be positive (got %d)", n)
	}
	m.reqs = make([]request, n)
	for i := range m.reqs {
		q := &m.reqs[i]
		k := 1
		if m.selfLoop {
			k = rounds.Draw(r, 0)
		}
		for range k {
			q.chunk = append(q.chunk, prompts.Draw(r, 0))
			q.out = append(q.out, outs.Draw(r, ms.MaxOutput))
		}
		for _, e := range edges {
			up := a.byName(e.From)
			j := int(e.Skip*float64(len(up.reqs))) + i
			if j >= len(up.reqs) {
				return fmt.Errorf("request %d reads request %d of %s, which answers only %d", i, j, e.From, len(up.reqs))
			}
			q.deps = append(q.deps, reqRef{up.idx, j})
		}
	}
	for i := range m.reqs {
		for rd := range m.reqs[i].out {
			m.longest = max(m.longest, a.prompt(m, i, rd)+m.reqs[i].out[rd])
		}
	}
	return nil
}

func shareOf(e InputSpec) float64 {
	if e.Share <= 0 {
		return 1
	}
	return e.Share
}

func ecdfFile(dir, name, field string) (ECDF, error) {
	s, err := readSamples(dir, name)
	if err != nil {
		return ECDF{}, fmt.Errorf("%s: %w", field, err)
	}
	e, err := NewECDF(s)
	if err != nil {
		return ECDF{}, fmt.Errorf("%s %s: %w", field, name, err)
	}
	return e, nil
}
