package engine

import (
	"fmt"
	"time"
)

// This file is the entry point for a simulator that runs several engines on
// one timeline (bench --replicas): instead of Run, which owns the loop until
// the engine is idle, the caller steps whichever engine's next event is
// earliest, so that every engine sees the others' calls at the right time.

// StepOnce runs the loop once on a virtual clock: due timers, then one
// iteration if any call can run. It returns the instant of the engine's
// next event (now, while it has work; its next timer when nothing can run)
// and false when it has none.
func (e *Engine) StepOnce() (next time.Duration, ok bool, err error) {
	if e.vclock == nil {
		return 0, false, fmt.Errorf("engine: StepOnce needs a virtual clock")
	}
	e.drain()
	if e.failed != nil {
		return 0, false, e.failed
	}
	if e.hasWork() {
		ran, err := e.step()
		if err != nil {
			return 0, false, err
		}
		if ran {
			return e.clock.Now(), true, nil
		}
	}
	if t, ok := e.timers.next(); ok {
		return t, true, nil
	}
	if e.pendingPosts() {
		return e.clock.Now(), true, nil
	}
	if e.hasWork() {
		return 0, false, fmt.Errorf("engine: stuck with %d runnable calls and nothing that could free memory", e.queue.live)
	}
	return 0, false, nil
}

// AdvanceTo moves a virtual clock forward to t (never back): an idle engine
// catches up with the shared timeline.
func (e *Engine) AdvanceTo(t time.Duration) {
	if e.vclock != nil {
		e.vclock.jump(t)
	}
}

// Iterations is the number of iterations the engine has run (tried): with
// Live and Now, a key that changes whenever Load may have.
func (e *Engine) Iterations() int64 { return e.iter }

// Load is an engine's work as a load balancer sees it.
type Load struct {
	Waiting, Running, Paused int // runnable calls off / on the device; calls in a tool
	// WaitingTokens and RunningTokens are the work of those calls: prompt
	// tokens still to compute plus predicted tokens still to decode.
	WaitingTokens, RunningTokens int
	WaitingPrefill               int // prompt tokens the waiting calls still compute
	RunningContext               int // context tokens of the running calls
	FreeBlocks                   int
}

// Load counts the engine's calls (engine goroutine only).
func (e *Engine) Load() Load {
	var l Load
	for _, s := range e.seqs {
		// The forecast is the one made when the call last became runnable.
		work := s.Remaining() + s.forecast.Predicted.Decode
		switch {
		case s.state == Running:
			l.Running++
			l.RunningTokens += work
			l.RunningContext += len(s.tokens)
		case s.Runnable():
			l.Waiting++
			l.WaitingTokens += work
			l.WaitingPrefill += s.Remaining()
		case s.state == Paused:
			l.Paused++
		}
	}
	l.FreeBlocks = e.blocks.FreeBlocks()
	return l
}

// CachedPrefix is how many leading tokens of a prompt this engine holds in
// its device prefix cache for calls of cache salt salt (engine goroutine
// only).
func (e *Engine) CachedPrefix(salt uint64, prompt []int32) int {
	if !e.blocks.PrefixCache() {
		return 0
	}
	return e.CachedBlocks(SaltedPrefixHashes(salt, prompt, e.cfg.BlockSize)) * e.cfg.BlockSize
}

// BlockSize is the engine's tokens per KV block.
func (e *Engine) BlockSize() int { return e.cfg.BlockSize }

// PrefixHashes is the hash chain by which a prefix cache of block size bs
// keys a prompt's full blocks: hashes[i] covers tokens [0, (i+1)·bs). A
// caller asking many engines about one prompt hashes it once.
func PrefixHashes(prompt []int32, bs int) []uint64 {
	return SaltedPrefixHashes(0, prompt, bs)
}

// SaltedPrefixHashes is PrefixHashes for calls of cache salt salt
// (Request.CacheSalt); salt 0 is PrefixHashes.
func SaltedPrefixHashes(salt uint64, prompt []int32, bs int) []uint64 {
	if bs <= 0 {
		return nil
	}
	out := make([]uint64, 0, len(prompt)/bs)
	var h uint64
	for i := 0; (i+1)*bs <= len(prompt); i++ {
		if i == 0 {
			h = hashRoot(salt, 0, prompt[:bs])
		} else {
			h = hashBlock(h, prompt[i*bs:(i+1)*bs])
		}
		out = append(out, h)
	}
	return out
}

// CachedBlocks is how many leading blocks of a hash chain (PrefixHashes at
// this engine's block size) its device prefix cache holds (engine
// goroutine only).
func (e *Engine) CachedBlocks(hashes []uint64) int {
	if !e.blocks.PrefixCache() {
		return 0
	}
	for i, h := range hashes {
		if _, ok := e.blocks.Lookup(h); !ok {
			return i
		}
	}
	return len(hashes)
}
