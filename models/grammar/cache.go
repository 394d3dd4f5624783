package grammar

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
)

// Cache keeps compiled grammars per schema for one vocabulary, so that
// requests with the same schema share its masks. It is safe for
// concurrent use.
type Cache struct {
	v     *Vocab
	max   int
	mu    sync.Mutex
	byKey map[string]*Compiled
	order []string // oldest first, for eviction
}

// NewCache returns a cache of at most max compiled schemas over v.
func NewCache(v *Vocab, max int) *Cache {
	return &Cache{v: v, max: max, byKey: map[string]*Compiled{}}
}

// Vocab is the cache's vocabulary.
func (c *Cache) Vocab() *Vocab { return c.v }

// Get returns the compiled grammar of a schema (nil schema: AnyJSON),
// compiling it on first use. Schemas that differ only in whitespace or
// key order share an entry.
func (c *Cache) Get(schema []byte) (*Compiled, error) {
	key := "any"
	if schema != nil {
		key = canonical(schema)
	}
	c.mu.Lock()
	if cg, ok := c.byKey[key]; ok {
		c.mu.Unlock()
		return cg, nil
	}
	c.mu.Unlock()
	var g *Grammar
	if schema == nil {
		g = AnyJSON()
	} else {
		var err error
		if g, err = Compile(schema); err != nil {
			return nil, err
		}
	}
	return c.put(key, NewCompiled(g, c.v)), nil
}

// canonical re-encodes JSON with sorted keys and no whitespace.
func canonical(b []byte) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return string(b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(b)
	}
	return string(out)
}

// GetToolCall returns the compiled grammar of a tool call among tools
// (CompileToolCall), compiling it on first use.
func (c *Cache) GetToolCall(tools []ToolSpec, argsKey string) (*Compiled, error) {
	var b strings.Builder
	b.WriteString("call:" + argsKey)
	for _, t := range tools {
		b.WriteString("\x00" + t.Name + "\x00" + canonical(t.Parameters))
	}
	key := b.String()
	c.mu.Lock()
	if cg, ok := c.byKey[key]; ok {
		c.mu.Unlock()
		return cg, nil
	}
	c.mu.Unlock()
	g, err := CompileToolCall(tools, argsKey)
	if err != nil {
		return nil, err
	}
	return c.put(key, NewCompiled(g, c.v)), nil
}

// put stores a compiled grammar, unless another got there first.
func (c *Cache) put(key string, cg *Compiled) *Compiled {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.byKey[key]; ok {
		return old
	}
	if len(c.order) >= c.max && c.max > 0 {
		delete(c.byKey, c.order[0])
		c.order = c.order[1:]
	}
	c.byKey[key] = cg
	c.order = append(c.order, key)
	return cg
}
