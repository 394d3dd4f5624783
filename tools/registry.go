package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// Registry holds the tools the runtime runs itself. It is safe for
// concurrent use. The zero value is an empty registry ready to use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*entry
	gen   uint64
}

// entry is a registered tool with its compiled state.
type entry struct {
	tool   *Tool
	schema *argsSchema
	sem    chan struct{} // nil: unlimited
	gen    uint64        // distinguishes re-registrations (cache keys)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register checks t (name, handler, limits, parameters schema) and adds a
// copy of it. A tool whose name is taken is an error wrapping ErrDuplicate;
// an invalid schema is an error wrapping ErrInvalidSchema that says what is
// wrong.
func (r *Registry) Register(t *Tool) error {
	s, err := t.compile()
	if err != nil {
		return err
	}
	e := &entry{tool: t.clone(), schema: s}
	if t.MaxConcurrency > 0 {
		e.sem = make(chan struct{}, t.MaxConcurrency)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicate, t.Name)
	}
	if r.tools == nil {
		r.tools = make(map[string]*entry)
	}
	r.gen++
	e.gen = r.gen
	r.tools[t.Name] = e
	return nil
}

// MustRegister is Register for tools known to be valid; it panics on error.
func (r *Registry) MustRegister(t *Tool) {
	if err := r.Register(t); err != nil {
		panic(err)
	}
}

// Get returns a copy of the named tool.
func (r *Registry) Get(name string) (*Tool, bool) {
	e := r.entry(name)
	if e == nil {
		return nil, false
	}
	return e.tool.clone(), true
}

func (r *Registry) entry(name string) *entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools[name]
}

// Remove unregisters the named tool and reports whether it was there. Calls
// already running finish normally.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.tools[name]
	delete(r.tools, name)
	return ok
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// Names returns the registered tool names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// List returns copies of the registered tools, sorted by name.
func (r *Registry) List() []*Tool {
	r.mu.RLock()
	out := make([]*Tool, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e.tool.clone())
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Tool) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Definition is one entry of an OpenAI chat completion request's "tools"
// array.
type Definition struct {
	Type     string             `json:"type"` // always "function"
	Function FunctionDefinition `json:"function"`
}

// FunctionDefinition is the function part of a Definition.
type FunctionDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Definition returns the tool in OpenAI "tools" form.
func (t *Tool) Definition() Definition {
	return Definition{Type: "function", Function: FunctionDefinition{
		Name: t.Name, Description: t.Description, Parameters: t.parameters(),
	}}
}

// OpenAIDefinitions returns the registered tools in OpenAI "tools" form
// (json.Marshal of the result is the "tools" array), sorted by name. With
// names, only those tools are returned (unknown names are skipped).
func (r *Registry) OpenAIDefinitions(names ...string) []Definition {
	var want map[string]bool
	if len(names) > 0 {
		want = make(map[string]bool, len(names))
		for _, n := range names {
			want[n] = true
		}
	}
	list := r.List()
	out := make([]Definition, 0, len(list))
	for _, t := range list {
		if want != nil && !want[t.Name] {
			continue
		}
		out = append(out, t.Definition())
	}
	return out
}
