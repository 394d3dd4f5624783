package engine

import (
	"fmt"
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// step runs one iteration. It reports false when nothing could run (all
// runnable calls wait for memory that only a tool's return can free).
func (e *Engine) step() (bool, error) {
	e.iter++
	e.batch.reset()
	e.stats = IterationStats{}
	e.swapBudget.Reset()
	e.refreshView()
	e.handlePaused()
	e.rank()
	e.buildBatch()
	if len(e.batch.Items) == 0 && len(e.batch.SwapOut) == 0 && len(e.batch.SwapIn) == 0 {
		return false, nil
	}
	dur, err := e.exec.Step(&e.batch)
	if len(e.hostAfterStep) > 0 {
		e.host.Free(e.hostAfterStep)
		e.hostAfterStep = e.hostAfterStep[:0]
	}
	if err != nil {
		return false, fmt.Errorf("engine: executor step %d: %w", e.iter, err)
	}
	if e.vclock != nil {
		e.vclock.advance(dur)
	}
	e.postprocess(dur)
	return true, nil
}

// rank asks the policy for the priorities of calls that changed, or of all
// runnable calls when it asks for a refresh, and settles the run queue.
func (e *Engine) rank() {
	for i, s := range e.dirty {
		s.dirty = false
		e.dirty[i] = nil
		if s.Runnable() {
			e.queue.push(s, e.policy.Priority(&e.view, s))
		}
	}
	e.dirty = e.dirty[:0]
	e.coldWatched()
	if e.policy.Refresh(&e.view) {
		e.queue.rerank(func(s *Sequence) Priority { return e.policy.Priority(&e.view, s) })
		return
	}
	e.queue.settle()
}

func (e *Engine) refreshView() {
	e.view.Now = e.clock.Now()
	e.view.Iteration = e.iter
	e.view.BlockSize = e.cfg.BlockSize
	e.view.TotalBlocks = e.cfg.NumBlocks
	e.view.FreeBlocks = e.blocks.FreeBlocks()
	e.view.HostBlocks = e.host.Capacity()
	e.view.HostFree = e.host.Capacity() - e.host.Used()
	e.view.Cost = e.cfg.Cost
	e.view.Programs = e.programs
	e.view.eng = e
}

// handlePaused re-checks the handling of calls paused with KV on the device
// and carries out pending swap-outs within the swap budget.
func (e *Engine) handlePaused() {
	for _, s := range e.paused {
		if s.state != Paused || s.place != OnDevice {
			continue
		}
		kind := handling.Swap
		if !s.pendingOut {
			kind = e.policy.Handle(&e.view, s)
		}
		s.lostBy = LostAtTool
		switch kind {
		case handling.Swap:
			s.pendingOut = !e.swapOut(s, SwapAtHandling)
			if s.place == Dropped {
				kind = handling.Discard
			}
		case handling.Discard:
			e.discard(s)
		}
		if kind != s.handling {
			s.handling = kind
			e.emit(Event{Kind: EvHandled, Seq: s, Handling: kind})
		}
	}
	e.compactPaused()
}

// compactPaused keeps only calls paused with KV on the device.
func (e *Engine) compactPaused() {
	p := e.paused[:0]
	for _, s := range e.paused {
		if s.state == Paused && s.place == OnDevice {
			p = append(p, s)
		}
	}
	clear(e.paused[len(p):])
	e.paused = p
}

// postprocess accounts the iteration and applies sampled tokens.
func (e *Engine) postprocess(dur time.Duration) {
	running, runningCtx, batched := 0, 0, 0
	for i := range e.batch.Items {
		batched += e.batch.Items[i].Len
	}
	for i := range e.batch.Items {
		it := &e.batch.Items[i]
		s := it.Seq
		before := s.computed
		s.computed += it.Len
		recomputed := 0
		if before < s.highWater {
			recomputed = min(s.computed, s.highWater) - before
			e.stats.RecomputeTokens += recomputed
			e.stats.RecomputeBy[s.lostBy] += recomputed
		}
		if batched > 0 {
			s.chargeLoad(dur*time.Duration(it.Len)/time.Duration(batched), it.Len, recomputed)
		}
		s.highWater = max(s.highWater, s.computed)
		e.commitBlocks(s)
		s.service += dur
		s.prog.Service += dur
		s.prog.ThreadService[s.req.Thread] += dur
		if it.Len == 1 && it.Sample && before > 0 {
			e.stats.DecodeTokens++
			e.stats.DecodeContext += it.Start + 1
		} else {
			e.stats.PrefillTokens += it.Len
		}
		if it.Sample {
			e.sample(s, it.Token)
		}
		if s.state == Running {
			running++
			runningCtx += s.computed
			s.viewCtx, s.viewIter = s.computed, e.iter
			e.markDirty(s) // its service changed: the policy may rank it anew
		}
	}
	e.view.Running, e.view.RunningCtx = running, runningCtx
	e.viewIter = e.iter
	st := &e.stats
	st.Duration = dur
	st.Seqs = len(e.batch.Items)
	st.UsedBlocks = e.blocks.UsedBlocks()
	st.TotalBlocks = e.cfg.NumBlocks
	st.HostUsed = e.host.Used()
	st.HostRunnable = e.hostRunnable()
	st.Waiting = e.queue.live - running
	st.Paused = len(e.paused)
	bb := int64(e.host.BlockBytes())
	st.SwapOutBytes = int64(st.SwapOutBlocks) * bb
	st.SwapInBytes = int64(st.SwapInBlocks) * bb
	e.emit(Event{Kind: EvIteration, Iter: st})
}

// sample applies one sampled token through the sequence's controller.
func (e *Engine) sample(s *Sequence, tok int32) {
	act := s.req.Controller.Next(s, tok)
	s.tokens = append(s.tokens, act.Token)
	s.generated++
	if s.generated == 1 {
		s.firstToken = e.clock.Now()
	}
	e.emit(Event{Kind: EvToken, Seq: s, Token: act.Token})
	if act.Kind == Continue && s.req.MaxTokens > 0 && s.generated >= s.req.MaxTokens {
		act.Kind = Finish
	}
	switch act.Kind {
	case Pause:
		e.pause(s, act.Tool)
	case Finish:
		e.finish(s, nil)
	}
}

// pause parks a call at a tool call and applies the policy's handling.
func (e *Engine) pause(s *Sequence, tool ToolCall) {
	e.leaveRunnable(s)
	e.setState(s, Paused)
	s.place = OnDevice
	s.tool = tool
	s.lostBy = LostAtTool
	s.pausedAt = e.clock.Now()
	e.view.Now = s.pausedAt
	v := e.HandlingView(s)
	kind := e.policy.Handle(&v, s)
	s.handling = kind
	context := s.computed
	switch kind {
	case handling.Discard:
		e.discard(s)
	case handling.Swap:
		s.pendingOut = true // carried out next iteration, within the swap budget
		e.paused = append(e.paused, s)
	default:
		e.paused = append(e.paused, s)
	}
	e.emit(Event{Kind: EvPaused, Seq: s, Handling: kind, Context: context})
}

// finish ends a call and frees everything it holds.
func (e *Engine) finish(s *Sequence, err error) {
	if s.state == Finished {
		return
	}
	if s.Runnable() {
		e.leaveRunnable(s)
	}
	e.forgetTail(s)
	e.unguard(s)
	r := e.policy.Retain(&e.view, s)
	if r == RetainWatch {
		e.watch(s)
	}
	e.dropKVAs(s, r)
	e.setState(s, Finished)
	s.err = err
	s.finishedAt = e.clock.Now()
	delete(e.seqs, s.id)
	e.programs.finish(s, s.finishedAt)
	e.emit(Event{Kind: EvFinished, Seq: s, Err: err})
}

// HandlingView is the view a call's handling is decided on: the engine's
// view without the call itself, which ran in the batch the view counts, so
// that its handling weighs the other running calls only.
func (e *Engine) HandlingView(s *Sequence) View {
	v := e.view
	if s.viewIter == e.viewIter && e.viewIter > 0 {
		v.Running = max(v.Running-1, 0)
		v.RunningCtx = max(v.RunningCtx-s.viewCtx, 0)
	}
	return v
}
