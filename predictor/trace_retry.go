package predictor

// DeriveRetries marks each record that goes back to an earlier point of its
// conversation (Input.Retry) where the trace's History is its branch's, as
// a tree-search converter writes it: a record of a started program whose
// history holds no more calls than the previous record's of the same
// program and thread did (a search trying another child of an earlier
// node), and holds some (an empty history is a restart, Restarts). It reads
// only the histories of earlier records, never an output. It never clears
// Retry: the runtime records it from the request itself, and its traces'
// histories grow with every segment of a conversation, so nothing is
// derived there.
func DeriveRetries(recs []TraceRecord) {
	type prev struct{ segment, calls int }
	progs := map[string]prev{}
	for i := range recs {
		r := &recs[i]
		if r.Program == "" {
			continue
		}
		key := r.Source + "\x00" + r.Program + "\x00" + r.Thread
		p, ok := progs[key]
		calls := r.Input.History.Calls
		if ok && r.Segment == p.segment+1 && calls > 0 && calls <= p.calls {
			r.Input.Retry = true
		}
		progs[key] = prev{segment: r.Segment, calls: calls}
	}
}
