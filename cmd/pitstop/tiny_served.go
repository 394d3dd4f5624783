package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/training/tinytools"
)

// servedEngine is the serving stack below the HTTP layer, for eval-tiny
// --served: the model as `serve --model` loads it (runtime.LoadWeightsModel:
// a GGUF file keeps its quantized projections), the CPU executor and engine
// configuration serve builds for it (runtime.NewCPUBackend) and the engine
// under a scheduling policy. Each dialogue is one engine call that pauses
// at the end of its first turn, as a tool call does, and is resumed with the
// tool results: the same forward pass, KV cache, sampling (greedy) and
// pause handling as a served request. Only the HTTP layer, the chat
// template and the tool-call parser are eval-tiny's own (it renders the
// training prompt variants, which the server's single template does not).
type servedEngine struct {
	eng    *engine.Engine
	stop   map[int32]bool
	convs  map[engine.SeqID]*servedConversation // engine goroutine only
	cancel context.CancelFunc
	done   chan error
}

// startServed loads model as serve does and starts its engine; Close stops it.
func startServed(model, policyName string) (*servedEngine, *runtime.WeightsModel, error) {
	m, err := runtime.LoadWeightsModel(model, runtime.WeightsOptions{})
	if err != nil {
		return nil, nil, err
	}
	// No calibration: it prices the handling decisions, not the tokens.
	b, err := runtime.NewCPUBackend(m, runtime.CPUOptions{Calibrate: -1})
	if err != nil {
		return nil, nil, err
	}
	pol, err := policy.New(policyName, policy.Options{})
	if err != nil {
		return nil, nil, usageError{err.Error()}
	}
	se := &servedEngine{stop: map[int32]bool{}, convs: map[engine.SeqID]*servedConversation{}, done: make(chan error, 1)}
	for _, t := range m.StopTokens() {
		se.stop[t] = true
	}
	if se.eng, err = engine.New(b.Engine, engine.NewRealClock(), b.Executor, pol, se); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	se.cancel = cancel
	go func() { se.done <- se.eng.Run(ctx) }()
	return se, m, nil
}

// Close stops the engine.
func (se *servedEngine) Close() error {
	se.cancel()
	if err := <-se.done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// Observe ends the turn of a call that the engine finished on its own
// (failed, or cut at the context limit).
func (se *servedEngine) Observe(ev *engine.Event) {
	if ev.Kind != engine.EvFinished || ev.Seq == nil {
		return
	}
	c := se.convs[ev.Seq.ID()]
	delete(se.convs, ev.Seq.ID())
	if c == nil || ev.Seq.Cancelled() {
		return
	}
	err := ev.Err
	if err == nil {
		err = fmt.Errorf("engine finished call %d before its turn ended", ev.Seq.ID())
	}
	c.end(err)
}

// conversation opens one dialogue (tinytools.LoadedModel.Served).
func (se *servedEngine) conversation() (tinytools.Conversation, error) {
	return &servedConversation{se: se, turn: make(chan error, 1)}, nil
}

// servedConversation is one engine call. Its Next runs on the engine
// goroutine; Turn hands over through the turn channel.
type servedConversation struct {
	se      *servedEngine
	id      engine.SeqID
	started bool
	out     []int32
	maxNew  int
	ended   bool
	turn    chan error
}

func (c *servedConversation) end(err error) {
	if !c.ended {
		c.ended = true
		c.turn <- err
	}
}

func (c *servedConversation) Turn(tokens []int32, maxNew int) ([]int32, error) {
	c.out, c.maxNew, c.ended = nil, maxNew, false
	if !c.started {
		c.started = true
		c.se.eng.Post(func() {
			s, err := c.se.eng.SubmitNow(engine.Request{Name: "eval-tiny", Prompt: tokens, Controller: c})
			if err != nil {
				c.end(err)
				return
			}
			c.id = s.ID()
			c.se.convs[c.id] = c
		})
	} else {
		c.se.eng.Post(func() {
			if err := c.se.eng.Resume(c.id, tokens); err != nil {
				c.end(err)
			}
		})
	}
	if err := <-c.turn; err != nil {
		return c.out, err
	}
	return c.out, nil
}

// Next keeps the sampled token and pauses the call at a stop token or after
// maxNew tokens, as a served call pauses at a tool call.
func (c *servedConversation) Next(_ *engine.Sequence, t int32) engine.Action {
	c.out = append(c.out, t)
	if c.se.stop[t] || len(c.out) >= c.maxNew {
		c.end(nil)
		return engine.Action{Token: t, Kind: engine.Pause, Tool: engine.ToolCall{Name: "eval-tiny"}}
	}
	return engine.Action{Token: t}
}

func (c *servedConversation) Forecast(*engine.Sequence) engine.Forecast { return engine.Forecast{} }

// Close ends the call and frees its KV.
func (c *servedConversation) Close() {
	if c.started {
		c.se.eng.Post(func() {
			delete(c.se.convs, c.id)
			c.se.eng.Cancel(c.id)
		})
	}
}
