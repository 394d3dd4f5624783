package engine

import (
	"cmp"
	"slices"

	"github.com/pitstop-llm/pitstop/handling"
)

// hostRanks is the parked KV that may give way on the host tier, in the
// policy's HostRank order (ascending), with the host blocks held from each
// entry to the end: one sort per iteration, or after the parked set changes,
// answers every HostRoom of the iteration in O(log n).
type hostRanks struct {
	iter  int64
	ver   uint64
	seqs  []*Sequence
	ranks []float64
	above []int // above[i]: host blocks of seqs[i:]
}

// hostOrder returns the parked calls that may give way, ordered by the
// policy's HostRank, as of this iteration.
func (e *Engine) hostOrder() *hostRanks {
	h := &e.hostRanks
	if h.iter == e.iter && h.ver == e.hostVer && h.seqs != nil {
		return h
	}
	h.iter, h.ver = e.iter, e.hostVer
	clear(h.seqs)
	h.seqs = h.seqs[:0]
	for _, p := range e.onHost {
		if e.displaceableHost(p) {
			h.seqs = append(h.seqs, p)
		}
	}
	for _, p := range h.seqs {
		p.hostRank = e.policy.HostRank(&e.view, p)
	}
	// Ascending rank, then submission: the end gives way first.
	slices.SortFunc(h.seqs, func(a, b *Sequence) int {
		if c := cmp.Compare(a.hostRank, b.hostRank); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	h.ranks = slices.Grow(h.ranks[:0], len(h.seqs))[:len(h.seqs)]
	h.above = slices.Grow(h.above[:0], len(h.seqs)+1)[:len(h.seqs)+1]
	h.above[len(h.seqs)] = 0
	for i := len(h.seqs) - 1; i >= 0; i-- {
		h.ranks[i] = h.seqs[i].hostRank
		h.above[i] = h.above[i+1] + len(h.seqs[i].host)
	}
	return h
}

// after is the index of the first parked call ranked strictly after rank.
func (h *hostRanks) after(rank float64) int {
	i, _ := slices.BinarySearchFunc(h.ranks, rank, func(r, t float64) int {
		if r <= t {
			return -1
		}
		return 1
	})
	return i
}

// displaceable is the host blocks held by parked calls that the policy's
// HostRank puts after s: the room a swap-out of s could take from them.
func (e *Engine) displaceable(s *Sequence) int {
	h := e.hostOrder()
	if len(h.seqs) == 0 {
		return 0
	}
	return h.above[h.after(e.policy.HostRank(&e.view, s))]
}

// makeHostRoom frees host slots for n blocks of s's KV by discarding the KV
// of parked calls that the policy's HostRank puts after s, latest first. It
// discards nothing and reports false when all of them together would not
// make room.
func (e *Engine) makeHostRoom(s *Sequence, n int) bool {
	h := e.hostOrder()
	if len(h.seqs) == 0 {
		return false
	}
	first := h.after(e.policy.HostRank(&e.view, s))
	if e.host.Available()+h.above[first] < n {
		return false
	}
	victims := e.cands[:0]
	for i, room := len(h.seqs)-1, e.host.Available(); i >= first && room < n; i-- {
		victims = append(victims, h.seqs[i])
		room += len(h.seqs[i].host)
	}
	for _, v := range victims {
		v.lostBy = LostFromHost
		e.discard(v) // changes the parked set: hostOrder sorts again when next asked
		v.handling = handling.Discard
		e.stats.HostEvictions++
		e.emit(Event{Kind: EvHandled, Seq: v, Handling: handling.Discard})
	}
	clear(victims)
	e.cands = victims[:0]
	return true
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
	e.hostVer++
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
	e.hostVer++
}
