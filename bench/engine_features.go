package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pitstop-llm/pitstop/engine"
)

// Engine features a bench run gives its policy. Chunked prefill (the
// engine's token budget) and the swap path are the engine's for every
// policy; the prefix cache is a policy trait, off by default, so a baseline
// written after its paper's system (lamps, infercept) ran without the cache
// that pitstop has. FeaturesSame gives every policy the features pitstop
// runs with, so a table compares scheduling, not engines; FeaturesPaper
// keeps each policy's own traits, the setup of the paper it reproduces.
const (
	FeaturesSame  = "same"
	FeaturesPaper = "paper"
)

// OwnFeatures are the policies that keep their own engine features under
// FeaturesSame, and why: each is defined by the feature it lacks.
var OwnFeatures = map[string]string{
	"fcfs":               "vLLM V0 as the papers ran it: no prefix cache (vllm-opt is fcfs with it)",
	"vllm-prefill-first": "vLLM's unchunked prefill-first scheduler (SOLA's vLLM-D): no chunking, no prefix cache",
}

// FeatureModes lists the valid values of WithEngineFeatures' mode.
func FeatureModes() []string { return []string{FeaturesSame, FeaturesPaper} }

// WithEngineFeatures returns the policy named name as a bench run gives it
// to the engine under mode: FeaturesSame turns the prefix cache on (unless
// the policy is one of OwnFeatures); FeaturesPaper returns p unchanged.
func WithEngineFeatures(mode, name string, p engine.Policy) (engine.Policy, error) {
	switch mode {
	case FeaturesPaper:
		return p, nil
	case FeaturesSame:
		if _, own := OwnFeatures[name]; own || p.Traits().PrefixCache {
			return p, nil
		}
		return engine.WithPrefixCache(p), nil
	}
	return nil, fmt.Errorf("unknown engine features %q (valid: %s)", mode, strings.Join(FeatureModes(), ", "))
}

// OwnFeatureNames lists OwnFeatures' policies, sorted.
func OwnFeatureNames() []string {
	var names []string
	for n := range OwnFeatures {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
