package engine

import (
	"slices"

	"github.com/pitstop-llm/pitstop/handling"
)

// makeHostRoom frees host slots for n blocks of s's KV by discarding the KV
// of parked calls that the policy's HostRank puts after s, latest first. It
// discards nothing and reports false when all of them together would not
// make room.
func (e *Engine) makeHostRoom(s *Sequence, n int) bool {
	short := n - e.host.Available()
	rank := e.policy.HostRank(&e.view, s)
	type ranked struct {
		s    *Sequence
		rank float64
	}
	var later []ranked
	held := 0
	for _, p := range e.onHost {
		if !e.displaceableHost(p) {
			continue
		}
		if r := e.policy.HostRank(&e.view, p); r > rank {
			later = append(later, ranked{p, r})
			held += len(p.host)
		}
	}
	if held < short {
		return false
	}
	// Latest first; among equals, the newest submission (stable order).
	slices.SortStableFunc(later, func(a, b ranked) int {
		switch {
		case a.rank > b.rank:
			return -1
		case a.rank < b.rank:
			return 1
		}
		return int(b.s.id) - int(a.s.id)
	})
	for _, v := range later {
		if e.host.Available() >= n {
			break
		}
		e.discard(v.s)
		v.s.handling = handling.Discard
		e.stats.HostEvictions++
		e.emit(Event{Kind: EvHandled, Seq: v.s, Handling: handling.Discard})
	}
	return true
}

// displaceable is the host blocks held by parked calls that the policy's
// HostRank puts after s: the room a swap-out of s could take from them.
func (e *Engine) displaceable(s *Sequence) int {
	rank := e.policy.HostRank(&e.view, s)
	n := 0
	for _, p := range e.onHost {
		if p != s && e.displaceableHost(p) && e.policy.HostRank(&e.view, p) > rank {
			n += len(p.host)
		}
	}
	return n
}

// displaceableHost reports whether p's host KV may give way: p is paused on
// a tool with its KV on the host, moved there before this iteration (a
// swap-out of this iteration is still to be carried out by the executor).
func (e *Engine) displaceableHost(p *Sequence) bool {
	return p.state == Paused && p.place == OnHost && p.hostIter != e.iter
}

// addOnHost records that s holds host slots.
func (e *Engine) addOnHost(s *Sequence) {
	if s.hostIdx >= 0 {
		return
	}
	s.hostIdx = len(e.onHost)
	e.onHost = append(e.onHost, s)
}

// removeOnHost records that s holds no host slot any more.
func (e *Engine) removeOnHost(s *Sequence) {
	i := s.hostIdx
	if i < 0 {
		return
	}
	last := e.onHost[len(e.onHost)-1]
	e.onHost[i] = last
	last.hostIdx = i
	e.onHost[len(e.onHost)-1] = nil
	e.onHost = e.onHost[:len(e.onHost)-1]
	s.hostIdx = -1
}
