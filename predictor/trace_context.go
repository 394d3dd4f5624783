package predictor

// OldestTraceVersion is the oldest trace-record feature version ReadTraces
// reads. Records hold raw inputs, not features, so older records are
// upgraded: what later versions read and older writers did not record is
// derived from the order of the records (DeriveContext).
const OldestTraceVersion = 1

// DeriveContext fills in, from the order of recs, what feature version 2
// reads and older writers (and the dataset converters) do not record: a
// record's LastTool (the tool its program's previous segment ended in, whose
// result is then the last message) and the per-kind running means of its
// History. A program's records must come in segment order; a record with
// segment 0 starts its program afresh. Records without a program id are
// single segments and keep their fields. Only earlier records of the same
// program and thread (its conversation) are read: never a record's own tool
// or output.
func DeriveContext(recs []TraceRecord) {
	type state struct {
		prevTool string
		h        History
	}
	eachConversation(recs, func(r *TraceRecord, st *state, follows bool) {
		if r.Segment == 0 {
			*st = state{}
		}
		if r.Input.LastTool == "" && follows {
			r.Input.LastTool = st.prevTool
		}
		h := &r.Input.History
		if h.Replies == 0 && h.MeanToolCallTokens == 0 && h.MeanReplyTokens == 0 {
			h.MeanToolCallTokens, h.Replies, h.MeanReplyTokens = st.h.MeanToolCallTokens, st.h.Replies, st.h.MeanReplyTokens
		}
		st.prevTool = r.Tool
		st.h = st.h.Observe(r.PreToolOutputTokens, r.Tool)
	})
}

// DeriveToolClasses fills each record's LastToolClass, where it is empty,
// with the argument class (ArgumentClass) of the call its program's
// previous segment ended in, from that record's ToolArgs: what the runtime
// knows before the segment. It reads only earlier records of the same
// program and thread, in segment order (a gap or a segment 0 starts afresh).
func DeriveToolClasses(recs []TraceRecord) {
	type prev struct{ tool, class string }
	eachConversation(recs, func(r *TraceRecord, p *prev, follows bool) {
		if follows && r.Input.LastToolClass == "" && r.Input.LastTool == p.tool && p.tool != "" {
			r.Input.LastToolClass = p.class
		}
		*p = prev{tool: r.Tool, class: ArgumentClass(r.ToolArgs)}
	})
}
