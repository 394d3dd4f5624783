package main

import "testing"

// TestCauses: a window's hits are named by their letters, none by "-",
// and a set of windows is counted by the side that had them.
func TestCauses(t *testing.T) {
	if got := (seen{mark: 0.1, wait: 0.6, run: 0.4}).causes(0.5, 0.5); got != "MW" {
		t.Errorf("causes %q, want MW", got)
	}
	if got := (seen{wait: 0.4, syscall: 0.49}).causes(0.5, 0.5); got != "-" {
		t.Errorf("causes %q, want -", got)
	}
	var c sides
	c.add("W", "-")
	c.add("-", "M")
	c.add("W", "M")
	c.add("-", "-")
	c.add("R", "-")
	if c != (sides{n: 5, routerOnly: 2, loadOnly: 1, both: 1, neither: 1}) {
		t.Errorf("sides %+v", c)
	}
}
