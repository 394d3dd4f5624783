package runtime

import "github.com/pitstop-llm/pitstop/engine"

// withPrefixCache turns on the engine's prefix cache under any policy and
// changes nothing else: the runtime relies on it so that a program's next
// call (the resume after tools the client ran) finds its KV again. It
// overrides Traits only; every other hook is the wrapped policy's, by
// embedding (engine.Policy).
type withPrefixCache struct{ engine.Policy }

func (p withPrefixCache) Traits() engine.Traits {
	t := p.Policy.Traits()
	t.PrefixCache = true
	return t
}

// wrapPolicy turns on the prefix cache.
func wrapPolicy(p engine.Policy) engine.Policy { return withPrefixCache{p} }
