package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pitstop-llm/pitstop/tools"
)

// Sources is the set of MCP servers one registry takes tools from. The
// zero value is an empty set. It is safe for concurrent use once built.
type Sources struct {
	list []*Source
}

// StartAll starts a Source per spec (names must differ) in the global scope
// of reg. On a bad spec it closes those already started and returns the
// error.
func StartAll(reg *tools.Registry, specs []ServerSpec, opts Options) (*Sources, error) {
	seen := map[string]bool{}
	set := &Sources{}
	for _, spec := range specs {
		if seen[spec.Name] {
			_ = set.Close()
			return nil, fmt.Errorf("MCP server name %q given twice; each server needs its own name", spec.Name)
		}
		seen[spec.Name] = true
		s, err := Start(reg, spec, opts)
		if err != nil {
			_ = set.Close()
			return nil, err
		}
		set.list = append(set.list, s)
	}
	return set, nil
}

// WaitReady waits for every server's first connection, or ctx's end; the
// error names each server not connected.
func (set *Sources) WaitReady(ctx context.Context) error {
	if set == nil {
		return nil
	}
	var errs []error
	for _, s := range set.list {
		if err := s.WaitReady(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Sources returns the servers, in the order they were given.
func (set *Sources) Sources() []*Source {
	if set == nil {
		return nil
	}
	return append([]*Source(nil), set.list...)
}

// Status returns each server's state.
func (set *Sources) Status() []Status {
	out := []Status{}
	for _, s := range set.Sources() {
		out = append(out, s.Status())
	}
	return out
}

// Owns reports whether name is a tool one of the servers registered.
func (set *Sources) Owns(name string) bool {
	for _, s := range set.Sources() {
		if s.Owns(name) {
			return true
		}
	}
	return false
}

// Close closes every server at once (see Source.Close).
func (set *Sources) Close() error {
	list := set.Sources()
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, s := range list {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
