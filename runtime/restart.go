package runtime

import "github.com/pitstop-llm/pitstop/models/chat"

// startsOver says whether a request's messages start a conversation: they
// hold no assistant message and no tool message, only system, developer or
// user messages, so the model has taken no turn in them yet. For a program
// that has run this conversation before (conversationOf: the same opening),
// that is an agent starting over (a tree search restarting from the root):
// its earlier segments are not this attempt's history, and the length
// predictor starts the conversation's history and blend afresh
// (programTable.history). A request that carries any turn continues.
func startsOver(msgs []chat.Message) bool {
	for _, m := range msgs {
		if m.Role == chat.RoleAssistant || m.Role == chat.RoleTool {
			return false
		}
	}
	return true
}
