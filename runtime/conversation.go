package runtime

import (
	"hash/fnv"
	"strconv"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// conversationOf names the conversation a request belongs to within its
// program, for the length predictor's history (programTable.history): the
// request's thread when it names one, else its opening, the system,
// developer and user messages before the model's first turn, hashed. Every
// request of a conversation carries the same opening (a client resends the
// conversation), so its calls find their own history again; a program's
// parallel subagents open with their own tasks, so each keeps its own
// history instead of reading its siblings' segments. A search that goes
// back to its root resends the same opening with no turn: the same
// conversation starting over (startsOver), whose history restarts.
// Subagents that open with the very same messages and name no thread are
// one conversation here (they pool, and each one's start restarts it).
func conversationOf(thread string, msgs []chat.Message) string {
	if thread != "" {
		return thread
	}
	h := fnv.New64a()
	for _, m := range msgs {
		if m.Role == chat.RoleAssistant || m.Role == chat.RoleTool {
			break
		}
		h.Write([]byte(m.Role))
		h.Write([]byte{0})
		h.Write([]byte(m.Content))
		h.Write([]byte{0})
	}
	return "#" + strconv.FormatUint(h.Sum64(), 16)
}
