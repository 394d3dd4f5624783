// Package policy holds the scheduling policies, one per file. Each orders the
// runnable calls and chooses preserve, swap or discard at tool calls; the
// engine's mechanism (batching, blocks, swaps) is the same for all.
package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pitstop-llm/pitstop/engine"
)

// Options are the knobs shared by the policies that use them.
type Options struct{}

var constructors = map[string]func(Options) engine.Policy{
	"fcfs":      func(Options) engine.Policy { return FCFS{} },
	"vllm-opt":  func(Options) engine.Policy { return VLLMOpt{} },
	"infercept": func(Options) engine.Policy { return InferCept{} },
}

// Names lists the valid policy names.
func Names() []string {
	names := make([]string, 0, len(constructors))
	for n := range constructors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// New builds a policy by name.
func New(name string, o Options) (engine.Policy, error) {
	c, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	return c(o), nil
}
