package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry holds the tools the runtime runs itself. It is safe for
// concurrent use. The zero value is an empty registry ready to use.
//
// Tools live in scopes. The global scope ("") holds the built-in tools and
// those the operator configures: every caller sees them. A named scope (a
// tenant) holds the tools registered under it: only callers of that scope
// see, run, replace or remove them, next to the global ones. The same name
// in two scopes is two tools; a scoped tool may not take a global tool's
// name, so a tenant never shadows the server's tools.
type Registry struct {
	mu    sync.RWMutex
	tools map[scopedName]*entry
	count map[string]int // tools per scope
	gen   uint64
}

// scopedName is a tool's key in the registry.
type scopedName struct{ scope, name string }

// entry is a registered tool with its compiled state.
type entry struct {
	tool   *Tool
	scope  string
	schema *argsSchema
	sem    chan struct{} // nil: unlimited
	gen    uint64        // distinguishes re-registrations (cache keys)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds t to the global scope; see RegisterIn.
func (r *Registry) Register(t *Tool) error { return r.RegisterIn("", t, ScopeOptions{}) }

// ScopeOptions say how RegisterIn treats a name already taken and how many
// tools the scope may hold.
type ScopeOptions struct {
	// Replace lets the registration replace the scope's tool of the same
	// name (calls already running finish with the old one).
	Replace bool
	// MaxTools caps the tools of the scope (0: no cap); one more is an
	// error wrapping ErrLimit.
	MaxTools int
}

// RegisterIn checks t (name, handler, limits, parameters schema) and adds a
// copy of it to scope. A name taken in the scope (unless opts.Replace) or by
// a global tool is an error wrapping ErrDuplicate; an invalid schema is an
// error wrapping ErrInvalidSchema that says what is wrong; a full scope is
// an error wrapping ErrLimit.
func (r *Registry) RegisterIn(scope string, t *Tool, opts ScopeOptions) error {
	s, err := t.compile()
	if err != nil {
		return err
	}
	e := &entry{tool: t.clone(), scope: scope, schema: s}
	if t.MaxConcurrency > 0 {
		e.sem = make(chan struct{}, t.MaxConcurrency)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := scopedName{scope, t.Name}
	_, exists := r.tools[key]
	switch {
	case scope != "" && r.tools[scopedName{"", t.Name}] != nil:
		return fmt.Errorf("%w: %q is a server tool", ErrDuplicate, t.Name)
	case exists && !opts.Replace:
		return fmt.Errorf("%w: %q", ErrDuplicate, t.Name)
	case !exists && opts.MaxTools > 0 && r.count[scope] >= opts.MaxTools:
		return fmt.Errorf("%w: %d tools registered, the most allowed", ErrLimit, r.count[scope])
	}
	if r.tools == nil {
		r.tools = make(map[scopedName]*entry)
		r.count = make(map[string]int)
	}
	r.gen++
	e.gen = r.gen
	r.tools[key] = e
	if !exists {
		r.count[scope]++
	}
	return nil
}

// MustRegister is Register for tools known to be valid; it panics on error.
func (r *Registry) MustRegister(t *Tool) {
	if err := r.Register(t); err != nil {
		panic(err)
	}
}

// Get returns a copy of the named global tool.
func (r *Registry) Get(name string) (*Tool, bool) { return r.GetIn("", name) }

// GetIn returns a copy of the tool a caller of scope means by name: the
// global tool of that name, else the scope's own.
func (r *Registry) GetIn(scope, name string) (*Tool, bool) {
	e := r.entry(scope, name)
	if e == nil {
		return nil, false
	}
	return e.tool.clone(), true
}

// Scoped reports whether name, as a caller of scope sees it, is one of the
// scope's own tools (not a global one).
func (r *Registry) Scoped(scope, name string) bool {
	e := r.entry(scope, name)
	return e != nil && e.scope != ""
}

func (r *Registry) entry(scope, name string) *entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.tools[scopedName{"", name}]; e != nil {
		return e
	}
	if scope == "" {
		return nil
	}
	return r.tools[scopedName{scope, name}]
}

// Remove unregisters the named global tool; see RemoveIn.
func (r *Registry) Remove(name string) bool { return r.RemoveIn("", name) }

// RemoveIn unregisters scope's tool of that name and reports whether it was
// there (a scope cannot remove global tools). Calls already running finish
// normally.
func (r *Registry) RemoveIn(scope, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := scopedName{scope, name}
	if _, ok := r.tools[key]; !ok {
		return false
	}
	delete(r.tools, key)
	r.count[scope]--
	return true
}

// Len returns the number of registered tools, all scopes.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// CountIn returns the number of tools registered in scope.
func (r *Registry) CountIn(scope string) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.count[scope]
}

// Names returns the global tool names, sorted.
func (r *Registry) Names() []string { return r.NamesIn("") }

// NamesIn returns the names a caller of scope sees, sorted.
func (r *Registry) NamesIn(scope string) []string {
	list := r.ListIn(scope)
	names := make([]string, len(list))
	for i, t := range list {
		names[i] = t.Name
	}
	return names
}

// List returns copies of the global tools, sorted by name.
func (r *Registry) List() []*Tool { return r.ListIn("") }

// ListIn returns copies of the tools a caller of scope sees (the global
// ones and the scope's own), sorted by name.
func (r *Registry) ListIn(scope string) []*Tool {
	var out []*Tool
	for _, st := range r.ListAll() {
		if st.Scope == "" || st.Scope == scope {
			out = append(out, st.Tool)
		}
	}
	return out
}

// ScopedTool is a tool with the scope it was registered in.
type ScopedTool struct {
	Scope string
	Tool  *Tool
}

// ListAll returns copies of every tool of every scope, sorted by scope and
// name (for an operator's view).
func (r *Registry) ListAll() []ScopedTool {
	r.mu.RLock()
	out := make([]ScopedTool, 0, len(r.tools))
	for k, e := range r.tools {
		out = append(out, ScopedTool{Scope: k.scope, Tool: e.tool.clone()})
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b ScopedTool) int {
		if c := strings.Compare(a.Scope, b.Scope); c != 0 {
			return c
		}
		return strings.Compare(a.Tool.Name, b.Tool.Name)
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
	return r.OpenAIDefinitionsIn("", names...)
}

// OpenAIDefinitionsIn is OpenAIDefinitions for the tools a caller of scope
// sees.
func (r *Registry) OpenAIDefinitionsIn(scope string, names ...string) []Definition {
	var want map[string]bool
	if len(names) > 0 {
		want = make(map[string]bool, len(names))
		for _, n := range names {
			want[n] = true
		}
	}
	list := r.ListIn(scope)
	out := make([]Definition, 0, len(list))
	for _, t := range list {
		if want != nil && !want[t.Name] {
			continue
		}
		out = append(out, t.Definition())
	}
	return out
}
