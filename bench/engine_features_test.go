package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/engine/policy"
)

// Under the default features every policy runs with pitstop's prefix cache,
// except the documented exceptions; chunked prefill and the swap path are the
// engine's for all. Under "paper" each keeps its own traits.
func TestSameEngineFeaturesForEveryPolicy(t *testing.T) {
	pitstop, err := policy.New("pitstop", policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !pitstop.Traits().PrefixCache {
		t.Fatal("pitstop runs without the prefix cache: the features to match are gone")
	}
	for _, own := range OwnFeatureNames() {
		if !slices.Contains(policy.Names(), own) {
			t.Errorf("exception %q is not a policy", own)
		}
	}
	var lacking []string
	for _, name := range policy.Names() {
		p, err := policy.New(name, policy.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Traits().PrefixCache {
			lacking = append(lacking, name)
		}
		same, err := WithEngineFeatures(FeaturesSame, name, p)
		if err != nil {
			t.Fatal(err)
		}
		_, own := OwnFeatures[name]
		if got := same.Traits().PrefixCache; got == own {
			t.Errorf("%s under %q: prefix cache %v, want %v", name, FeaturesSame, got, !own)
		}
		if same.Traits().Preemptive != p.Traits().Preemptive {
			t.Errorf("%s under %q: preemption changed; only engine features may", name, FeaturesSame)
		}
		paper, _ := WithEngineFeatures(FeaturesPaper, name, p)
		if paper != p {
			t.Errorf("%s under %q: the policy was changed", name, FeaturesPaper)
		}
	}
	// The baselines that lack the cache on their own, so "paper" differs.
	for _, name := range []string{"infercept", "lamps"} {
		if !slices.Contains(lacking, name) {
			t.Errorf("%s has the prefix cache of its own now: update OwnFeatures' docs and docs/results-infercept-script.md", name)
		}
	}
	if _, err := WithEngineFeatures("vllm-0.2", "lamps", pitstop); err == nil || !strings.Contains(err.Error(), "same") {
		t.Errorf("unknown mode: error %v should list the valid ones", err)
	}
}
