package workload

import (
	"errors"
	"fmt"
	"math"
)

// MaxTokens bounds every token count a workload may carry (prompt pieces, decode, tool
// returns, and the context a call builds), so that sums cannot overflow and a typo such as an
// extra zero in a trace is caught.
const MaxTokens = 1 << 24

// Validate checks that the workload can be replayed: at least one program; unique program
// ids and, inside a program, unique call ids; parents that exist, come earlier and are not
// repeated; ContinueParent only with a parent; at least one segment per call; every segment
// but the last ending in a tool call (Tool != "" or ToolTime > 0) and the last ending in none;
// non-negative, finite numbers; a non-empty prompt; a SharedPrefixBlock when there is a
// SharedPrefix; and, for a timestamped workload, arrivals that do not go back in time. The error
// names the program, call and segment.
func (w *Workload) Validate() error {
	if w == nil {
		return errors.New("nil workload")
	}
	if len(w.Programs) == 0 {
		return fmt.Errorf("workload %q has no programs", w.Name)
	}
	progs := make(map[string]bool, len(w.Programs))
	prevArrival := 0.0
	for pi := range w.Programs {
		p := &w.Programs[pi]
		if err := p.validate(); err != nil {
			return fmt.Errorf("workload %q: program %d (%q): %w", w.Name, pi, p.ID, err)
		}
		if progs[p.ID] {
			return fmt.Errorf("workload %q: program %d: duplicate program id %q", w.Name, pi, p.ID)
		}
		progs[p.ID] = true
		if w.Timestamped {
			if p.Arrival < prevArrival {
				return fmt.Errorf("workload %q: program %d (%q): arrival %g s is before the previous program's %g s", w.Name, pi, p.ID, p.Arrival, prevArrival)
			}
			prevArrival = p.Arrival
		}
	}
	return nil
}

func badFloat(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }

func badTokens(v int) bool { return v < 0 || v > MaxTokens }

func (p *Program) validate() error {
	if p.ID == "" {
		return errors.New("empty program id")
	}
	if badFloat(p.Arrival) {
		return fmt.Errorf("arrival %g: must be a finite number >= 0", p.Arrival)
	}
	if len(p.Calls) == 0 {
		return errors.New("no calls")
	}
	final := make(map[string]int, len(p.Calls))
	for ci := range p.Calls {
		c := &p.Calls[ci]
		end, err := c.validate(final)
		if err != nil {
			return fmt.Errorf("call %d (%q): %w", ci, c.ID, err)
		}
		final[c.ID] = end
	}
	return nil
}

// validate checks one call given the final contexts of the calls before it, and returns its own.
func (c *Call) validate(final map[string]int) (int, error) {
	if c.ID == "" {
		return 0, errors.New("empty call id")
	}
	if _, dup := final[c.ID]; dup {
		return 0, errors.New("duplicate call id")
	}
	seen := make(map[string]bool, len(c.Parents))
	for _, par := range c.Parents {
		if par == c.ID {
			return 0, errors.New("the call is its own parent")
		}
		if _, ok := final[par]; !ok {
			return 0, fmt.Errorf("parent %q does not exist or does not come earlier in the program", par)
		}
		if seen[par] {
			return 0, fmt.Errorf("parent %q is listed twice", par)
		}
		seen[par] = true
	}
	if c.ContinueParent && len(c.Parents) == 0 {
		return 0, errors.New("ContinueParent without a parent")
	}
	if badTokens(c.NewTokens) {
		return 0, fmt.Errorf("NewTokens %d: must be in [0, %d]", c.NewTokens, MaxTokens)
	}
	if c.SharedPrefixBlock < 0 || c.SharedPrefixBlock > MaxTokens {
		return 0, fmt.Errorf("SharedPrefixBlock %d: must be in [0, %d]", c.SharedPrefixBlock, MaxTokens)
	}
	if len(c.SharedPrefix) > 0 && c.SharedPrefixBlock == 0 {
		return 0, errors.New("SharedPrefix without a SharedPrefixBlock size")
	}
	if len(c.SharedPrefix) > MaxTokens || badTokens(len(c.SharedPrefix)*c.SharedPrefixBlock) {
		return 0, fmt.Errorf("SharedPrefix covers more than %d tokens", MaxTokens)
	}
	if badFloat(c.ThinkTime) {
		return 0, fmt.Errorf("ThinkTime %g: must be a finite number >= 0", c.ThinkTime)
	}
	n := c.PromptFromPrefix() + c.NewTokens
	if c.ContinueParent {
		n += final[c.Parents[0]]
	}
	if n > MaxTokens {
		return 0, fmt.Errorf("the prompt exceeds %d tokens", MaxTokens)
	}
	if n == 0 {
		return 0, errors.New("empty prompt: no parent context, no shared prefix and no new tokens")
	}
	if len(c.Segments) == 0 {
		return 0, errors.New("no segments")
	}
	for si := range c.Segments {
		s := &c.Segments[si]
		last := si == len(c.Segments)-1
		switch {
		case badTokens(s.Decode):
			return 0, fmt.Errorf("segment %d: Decode %d: must be in [0, %d]", si, s.Decode, MaxTokens)
		case badTokens(s.ToolReturn):
			return 0, fmt.Errorf("segment %d: ToolReturn %d: must be in [0, %d]", si, s.ToolReturn, MaxTokens)
		case badFloat(s.ToolTime):
			return 0, fmt.Errorf("segment %d: ToolTime %g: must be a finite number >= 0", si, s.ToolTime)
		case last && (s.Tool != "" || s.ToolTime > 0 || s.ToolReturn > 0):
			return 0, fmt.Errorf("segment %d: the last segment must not call a tool (Tool %q, ToolTime %g, ToolReturn %d)", si, s.Tool, s.ToolTime, s.ToolReturn)
		case !last && s.Tool == "" && s.ToolTime == 0:
			return 0, fmt.Errorf("segment %d of %d: only the last segment may end without a tool call", si, len(c.Segments))
		}
		n += s.Decode + s.ToolReturn
		if n > MaxTokens {
			return 0, fmt.Errorf("segment %d: the call's context exceeds %d tokens", si, MaxTokens)
		}
	}
	return n, nil
}
