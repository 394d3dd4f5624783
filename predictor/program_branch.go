package predictor

import (
	"math"
	"strconv"
	"strings"
)

// A program is usually one conversation, each segment continuing the one
// before it. A search agent's program is a tree instead: ToolBench's
// depth-first search (ConvertToolBenchTree) gives up on a branch and
// generates a sibling of an earlier turn, which sees that turn's branch and
// not the abandoned one. The history baseline reads the segment's own
// branch (its Input.History); a ProgramBlend kept per program read every
// turn the search had finished, abandoned branches too, so the mixture's
// history and blend experts pooled siblings that the baseline keeps apart
// (docs/results-predictor.md, session 12). A replay therefore keeps the
// blend after each segment under the conversation it leaves, and a segment
// starts from the blend of the conversation its own history says it
// continues: on a linear program that is the latest one, as before; on a
// tree, its branch. A segment whose history matches no earlier state of its
// program (a record without history, or a restart from the root) continues
// the program's latest blend, as before. Nothing here reads the segment's
// own output or tool: only the history it carries in.

// conversationKey names a conversation of a program by what its history
// holds: the segments, their summed output (the mean is a float; the sum is
// whole), the last one's output and the tools called.
func conversationKey(h History) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(h.Calls))
	b.WriteByte(0)
	b.WriteString(strconv.FormatInt(int64(math.Round(h.MeanOutputTokens*float64(h.Calls))), 10))
	b.WriteByte(0)
	b.WriteString(strconv.FormatFloat(h.LastOutputTokens, 'g', -1, 64))
	for _, t := range h.ToolsCalled {
		b.WriteByte(0)
		b.WriteString(t)
	}
	return b.String()
}

// branchOf is the blend r continues on its branch, if its history matches
// a conversation its program left.
func (m *ProgramBlends) branchOf(r TraceRecord) (ProgramBlend, bool) {
	if r.Input.History.Calls == 0 {
		return ProgramBlend{}, false
	}
	b, ok := m.branches[blendKey(r)][conversationKey(r.Input.History)]
	return b, ok
}

// keep books b as r's program's blend after r: its latest, and the one of
// the conversation r leaves (r's history with r taken in).
func (m *ProgramBlends) keep(r TraceRecord, b ProgramBlend) {
	if r.Program == "" {
		return
	}
	k := blendKey(r)
	m.progs[k] = b
	convs := m.branches[k]
	if convs == nil || r.Segment == 0 { // a segment 0 starts the program afresh
		convs = map[string]ProgramBlend{}
		m.branches[k] = convs
	}
	convs[conversationKey(r.Input.History.Observe(r.PreToolOutputTokens, r.Tool))] = b
}
