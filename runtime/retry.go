package runtime

import (
	"hash/fnv"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
)

// modelTurns counts the model's turns a request's messages carry (its
// assistant messages): how far into its conversation the request is.
func modelTurns(msgs []chat.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == chat.RoleAssistant {
			n++
		}
	}
	return n
}

// turnPrefixes returns, per model turn the request's messages carry (one
// per assistant message, len = modelTurns), a hash of its messages from the
// first through that turn's: two requests' prefixes at turn i are equal
// when they carry the same history up to the model's i-th turn (up to hash
// collisions). retries compares them, so a request is a retry only when it
// goes back to a point of the very history its previous request carried.
func turnPrefixes(msgs []chat.Message) []uint64 {
	var out []uint64
	h := fnv.New64a()
	field := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, m := range msgs {
		field(m.Role)
		field(m.Content)
		field(m.Name)
		field(m.ToolCallID)
		for _, c := range m.ToolCalls {
			field(c.ID)
			field(c.Name)
			field(c.Arguments)
		}
		h.Write([]byte{1}) // ends the message (its tool calls are a list)
		if m.Role == chat.RoleAssistant {
			out = append(out, h.Sum64())
		}
	}
	return out
}

// maxTurnPrefixes bounds the turn prefixes a conversation keeps of its
// latest request (conversation.prefixes): its last ones. A memory bound
// (8 bytes a turn), not a tuned value, shared with the replay
// (predictor.DeriveRetries): a request going back further than that from
// its conversation's latest turn is not told apart from a client that
// trimmed its history, and is no retry.
const maxTurnPrefixes = predictor.MaxRetryBack

// retries says whether a request of the program's conversation conv, whose
// messages' turn prefixes are prefixes (turnPrefixes: one per model turn
// it carries), goes back to an earlier point of the conversation than its
// previous request reached: it carries some turns, no more than the
// previous request did, and its messages up to its last turn are the
// previous request's up to that same turn, so it does not continue the turn
// the model generated last (a tree search trying another child of an
// earlier node, an agent retrying a step). The first segment it generates
// is then a retry for the length predictor (predictor.Input.Retry, which
// the trace records; predictor.ProgramBlend blends retries with the
// conversation's earlier retries). Comparing the prefixes, not only the
// turn counts, keeps a client that trims its history (a sliding window of
// its last messages, a summary in place of its older turns) from reading as
// a retry on every request once its turn count stops growing: its history
// up to its last turn is not the one its previous request carried. A
// trimmed request that does go back is no retry either: it does not carry
// the history it goes back along, and nothing in it tells it from a
// trimmed loop that repeats a step, so its segment is booked with the
// continuations, as before retries were told apart
// (TestRetryEdgesServeAndReplayAgree). A
// request with no turn starts the conversation over (startsOver) and is no
// retry. It records the request's last maxTurnPrefixes prefixes as the
// conversation's latest request's.
func (t *programTable) retries(id, conv string, prefixes []uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.rows[id]
	if p == nil {
		return false
	}
	c := p.conversation(conv)
	turns := len(prefixes)
	// c.prefixes[i] is the prefix at turn first+i+1 of the latest request.
	first := c.turns - len(c.prefixes)
	retry := turns > 0 && turns <= c.turns && turns > first &&
		c.prefixes[turns-first-1] == prefixes[turns-1]
	c.turns = turns
	keep := prefixes[max(0, turns-maxTurnPrefixes):]
	c.prefixes = append(c.prefixes[:0], keep...)
	return retry
}
