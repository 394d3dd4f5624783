package runtime

import "github.com/pitstop-llm/pitstop/models/chat"

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

// retries says whether a request of the program's conversation conv that
// carries turns of the model's turns (modelTurns) goes back to an earlier
// point of the conversation than its previous request reached: it carries
// some turns, but no more than the previous request did, so it does not
// continue the turn the model generated last (a tree search trying another
// child of an earlier node, an agent retrying a step). The first segment
// it generates is then a retry for the length predictor
// (predictor.Input.Retry, which the trace records; predictor.ProgramBlend
// blends retries with the conversation's earlier retries). A request with
// no turn starts the conversation over (startsOver) and is no retry. It
// records turns as the conversation's latest request's.
func (t *programTable) retries(id, conv string, turns int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.rows[id]
	if p == nil {
		return false
	}
	c := p.conversation(conv)
	retry := turns > 0 && turns <= c.turns
	c.turns = turns
	return retry
}
