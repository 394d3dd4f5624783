package runtime

import "time"

// Rows of calls made without a program id come and go at the call rate
// (30,000–37,500 in the table at 1,000 calls/s with the default
// AnonymousProgramTTL), and a scan of the whole table for them held its
// lock, which every call takes, for 9–15 ms at 40,000 rows
// (BenchmarkProgramTableExpire). They expire instead in the order their
// calls ended, a batch at a time; the scan of the whole table (expire) is
// left to the named programs' pace.

// endedRow is an anonymous call's row as its call ended.
type endedRow struct {
	key string
	at  time.Time
}

// endedBatch is how many ended rows one hold of the table's lock drops
// at most.
const endedBatch = 256

// expireEnded drops the rows of anonymous calls that ended before cutoff
// and have not been seen since, and returns how many. A row seen again
// (an invoke in its name) is left to expire.
func (t *programTable) expireEnded(cutoff time.Time) int {
	n := 0
	for {
		t.mu.Lock()
		i := 0
		for ; i < len(t.ended) && i < endedBatch && t.ended[i].at.Before(cutoff); i++ {
			e := t.ended[i]
			if p := t.rows[e.key]; p != nil && p.info.Anonymous && p.info.Active == 0 && p.invokeRun == 0 && p.info.LastSeen.Before(cutoff) {
				delete(t.rows, e.key)
				n++
			}
		}
		clear(t.ended[:i]) // the keys go with their rows
		t.ended = t.ended[i:]
		more := i == endedBatch
		t.mu.Unlock()
		if !more {
			return n
		}
	}
}
