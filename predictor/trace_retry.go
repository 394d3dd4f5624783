package predictor

import "slices"

// MaxRetryBack is how many of the model's turns back from its
// conversation's latest request a retry may go and still be told a retry:
// the runtime keeps its latest request's last MaxRetryBack turn prefixes
// (one hash each) to check that a request goes back in that very history,
// and DeriveRetries reads the traces the same way. A memory bound (8 bytes
// a turn), not a tuned value: going back further is not told apart from a
// client that trimmed its history.
const MaxRetryBack = 64

// DeriveRetries marks each record that goes back to an earlier point of its
// conversation (Input.Retry) where the trace's History is its branch's, as
// a tree-search converter writes it: a record of a started program whose
// history holds no more calls than the previous record's of the same
// program and thread did (a search trying another child of an earlier
// node), and holds some (an empty history is a restart, Restarts), and is
// the history the previous record's branch had at that depth (the search
// goes back along the branch it was on, as the runtime checks from the
// request's messages; a jump to another subtree is no retry there either),
// at most MaxRetryBack calls back. It reads only the histories of earlier
// records, never an output. It never clears Retry: the runtime records it
// from the request itself, and its traces' histories grow with every
// segment of a conversation, so nothing is derived there.
func DeriveRetries(recs []TraceRecord) {
	// branch[k] is the history of the record at depth k (k calls) on the
	// previous record's branch; a depth the records skipped holds Calls -1,
	// which no history equals.
	eachConversation(recs, func(r *TraceRecord, branch *[]History, follows bool) {
		if !follows {
			*branch = nil
		}
		b := *branch
		calls := r.Input.History.Calls
		last := len(b) - 1 // the previous record's calls
		if calls > 0 && calls <= last && calls > last-MaxRetryBack && sameHistory(b[calls], r.Input.History) {
			r.Input.Retry = true
		}
		b = b[:min(calls, len(b))]
		for len(b) < calls {
			b = append(b, History{Calls: -1})
		}
		*branch = append(b, r.Input.History)
	})
}

// sameHistory says whether two histories are equal, field by field.
func sameHistory(a, b History) bool {
	return a.Calls == b.Calls && a.MeanOutputTokens == b.MeanOutputTokens && a.LastOutputTokens == b.LastOutputTokens &&
		slices.Equal(a.ToolsCalled, b.ToolsCalled) && a.MeanToolCallTokens == b.MeanToolCallTokens &&
		a.Replies == b.Replies && a.MeanReplyTokens == b.MeanReplyTokens
}
