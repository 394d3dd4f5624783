package tinytools

import (
	"fmt"
	"slices"

	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// Conversation is one dialogue's context on a decoder. Turn appends tokens
// to the context and decodes greedily until a stop token (returned and kept
// in the context, as a server keeps it) or maxNew tokens. Evaluate plays
// every dialogue through one: this package's own forward pass (Session) by
// default, or LoadedModel.Served's, such as the serving engine's.
type Conversation interface {
	Turn(tokens []int32, maxNew int) ([]int32, error)
	Close()
}

// NewServed returns a LoadedModel whose dialogues are decoded by served
// (one Conversation per dialogue) instead of this package's forward pass:
// eval-tiny scores the path a server runs, with its weights (quantized
// ones included) and its executor. It has no Model, so no reference replay.
func NewServed(dir string, tok *tokenizer.Tokenizer, served func() (Conversation, error)) (*LoadedModel, error) {
	ts, err := NewToolset()
	if err != nil {
		return nil, err
	}
	lm := &LoadedModel{Dir: dir, Tok: tok, Data: NewData(tok, ts), stop: map[int32]bool{}, Served: served}
	for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
		if id, ok := tok.TokenID(s); ok {
			lm.stop[id] = true
		}
	}
	return lm, nil
}

// conversation opens the decoder of one dialogue of prompt variant v.
func (lm *LoadedModel) conversation(v int) (Conversation, error) {
	if lm.Served != nil {
		return lm.Served()
	}
	if lm.Model == nil {
		return nil, fmt.Errorf("tinytools: model %s has neither weights nor a served decoder", lm.Dir)
	}
	return &sessionConversation{lm: lm, variant: v}, nil
}

// sessionConversation decodes with this package's forward pass, starting
// from the variant's cached prompt prefix when the prompt extends it.
type sessionConversation struct {
	lm      *LoadedModel
	variant int
	s       *Session
}

func (c *sessionConversation) Turn(tokens []int32, maxNew int) ([]int32, error) {
	var logits []float32
	var err error
	if c.s == nil {
		p, pids, perr := c.lm.prefixSession(c.variant)
		if perr != nil {
			return nil, perr
		}
		if len(pids) < len(tokens) && slices.Equal(pids, tokens[:len(pids)]) {
			c.s = p.Clone()
			logits, err = c.s.Feed(tokens[c.s.Len():], false)
		} else {
			c.s = c.lm.Model.NewSession()
			logits, err = c.s.Feed(tokens, false)
		}
	} else {
		logits, err = c.s.Feed(tokens, false)
	}
	if err != nil {
		return nil, err
	}
	return c.s.Generate(logits, c.lm.stop, maxNew)
}

func (c *sessionConversation) Close() {}
