package predictor

// eachConversation calls step for every record of recs that belongs to a
// program, in order, with the state its conversation (blendKey: source,
// program and thread) has kept since its first record (S's zero value
// before it) and whether the conversation's previous record is the
// segment just before r (follows: a first record, or one after a gap,
// does not follow). The Derive functions share this walk: each reads only
// the conversation's earlier records, through what its step kept in S.
func eachConversation[S any](recs []TraceRecord, step func(r *TraceRecord, s *S, follows bool)) {
	type conversation struct {
		segment int // the latest record's
		state   S
	}
	convs := map[string]*conversation{}
	for i := range recs {
		r := &recs[i]
		if r.Program == "" {
			continue
		}
		key := blendKey(*r)
		c := convs[key]
		follows := c != nil && r.Segment == c.segment+1
		if c == nil {
			c = &conversation{}
			convs[key] = c
		}
		step(r, &c.state, follows)
		c.segment = r.Segment
	}
}
