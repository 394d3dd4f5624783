package cluster

import (
	"fmt"
	"slices"
	"strings"
)

// Balancer picks the replica that takes a call. Pick sees the replicas'
// state at the time of the call and returns an index into s.Replicas; it
// may keep its own memory (a round-robin cursor, a program table), so one
// Balancer serves one set of replicas.
type Balancer interface {
	Name() string
	Pick(c *Call, s *State) int
}

// ProgramEnder is implemented by balancers that keep per-program memory:
// the owner of the replicas tells them when a program ends.
type ProgramEnder interface {
	ProgramDone(program string)
}

// Options are the balancers' knobs; zero means the default.
type Options struct {
	// LongPrompt is Autellix's short/long cut-off in prompt tokens (0: the
	// paper's 2,048): longer calls stay on their program's replica.
	LongPrompt int
	// PrefixCacheThreshold, PrefixAbsThreshold and PrefixRelThreshold are
	// the prefix router's: it follows the cache when the best match covers
	// more than this fraction of the prompt (0: 0.5), unless the busiest
	// replica has more than Abs calls (0: 32) more than the least busy and
	// more than Rel times as many (0: 1.0001) — SGLang's router defaults.
	PrefixCacheThreshold float64
	PrefixAbsThreshold   int
	PrefixRelThreshold   float64
}

func (o Options) withDefaults() Options {
	if o.LongPrompt <= 0 {
		o.LongPrompt = 2048
	}
	if o.PrefixCacheThreshold <= 0 {
		o.PrefixCacheThreshold = 0.5
	}
	if o.PrefixAbsThreshold <= 0 {
		o.PrefixAbsThreshold = 32
	}
	if o.PrefixRelThreshold <= 0 {
		o.PrefixRelThreshold = 1.0001
	}
	return o
}

var constructors = map[string]func(Options) Balancer{
	"round-robin":  func(Options) Balancer { return &RoundRobin{} },
	"least-used":   func(Options) Balancer { return LeastUsed{} },
	"least-tokens": func(Options) Balancer { return LeastTokens{} },
	"prefix":       func(o Options) Balancer { return &Prefix{opts: o.withDefaults()} },
	"autellix":     func(o Options) Balancer { return NewAutellix(o.withDefaults().LongPrompt) },
	"pitstop":      func(o Options) Balancer { return NewPitstop() },
}

// Names lists the balancers, sorted.
func Names() []string {
	names := make([]string, 0, len(constructors))
	for n := range constructors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// New makes a balancer by name.
func New(name string, o Options) (Balancer, error) {
	c, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("unknown balancer %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	return c(o), nil
}
