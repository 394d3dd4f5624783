package report

// A call's position in its program, for the per-position breakdown of a
// run's latencies (Run.ByPosition): where a program's tail comes from
// differs by position (the first call waits behind other programs, the
// calls of a burst of parallel branches behind their siblings too).
const (
	PosFirst = "first" // a call with no parent: the program's start
	PosBurst = "burst" // released together with at least one sibling (one parent's end started several calls)
	PosLater = "later" // released alone, after its parents
)

// PositionStats are the latencies of the calls of one position: the calls
// counted (completed, and in a stopped run the unfinished ones censored at
// the stop, as Run's own TTFT and e2e), their TTFT and their e2e.
type PositionStats struct {
	Calls     int     `json:"calls"`
	TTFTMeanS float64 `json:"ttft_mean_s"`
	TTFTP50S  float64 `json:"ttft_p50_s"`
	TTFTP99S  float64 `json:"ttft_p99_s"`
	E2EMeanS  float64 `json:"e2e_mean_s"`
	E2EP99S   float64 `json:"e2e_p99_s"`
}

// positionSamples are one position's latencies so far.
type positionSamples struct{ ttft, e2e []float64 }

// SetPosition names the position of call (PosFirst, PosBurst, PosLater, or
// any label) before it arrives; calls without one are left out of
// Run.ByPosition.
func (c *Collector) SetPosition(call, pos string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.calls[call]; r != nil {
		r.pos = pos
		return
	}
	if c.pendingPos == nil {
		c.pendingPos = make(map[string]string)
	}
	c.pendingPos[call] = pos
}

// takePosition moves a call's pending position to its record at arrival.
func (c *Collector) takePosition(call string, r *callRec) {
	if pos, ok := c.pendingPos[call]; ok {
		r.pos = pos
		delete(c.pendingPos, call)
	}
}

// addPosition records a call finished at t under its position: its e2e,
// and its TTFT when it generated a token (as Run's TTFT).
func (c *Collector) addPosition(r *callRec, t float64) {
	addLabelled(&c.byPos, r.pos, r, t)
}

// addLabelled records a call finished at t under a label (its position,
// its class) in *byp, made at the first label; a call with no label is not
// recorded.
func addLabelled(byp *map[string]*positionSamples, label string, r *callRec, t float64) {
	if label == "" {
		return
	}
	if *byp == nil {
		*byp = make(map[string]*positionSamples)
	}
	by := *byp
	s := by[label]
	if s == nil {
		s = &positionSamples{}
		by[label] = s
	}
	if r.hasFirst {
		s.ttft = append(s.ttft, r.first-r.arrival)
	}
	s.e2e = append(s.e2e, t-r.arrival)
}

// positionStats summarises the samples of every position, with the
// unfinished calls of a stopped run censored at the stop.
func (c *Collector) positionStats() map[string]PositionStats {
	return c.labelStats(c.byPos, func(r *callRec) string { return r.pos })
}

// labelStats summarises the samples of every label, with the unfinished
// calls of a stopped run censored at the stop.
func (c *Collector) labelStats(by map[string]*positionSamples, label func(*callRec) string) map[string]PositionStats {
	if len(by) == 0 {
		return nil
	}
	all := make(map[string]positionSamples, len(by))
	for k, s := range by {
		all[k] = *s
	}
	if c.stoppedAt > 0 {
		for _, cr := range c.calls {
			l := label(cr)
			if l == "" {
				continue
			}
			s := all[l]
			s.ttft, s.e2e = append(s.ttft[:len(s.ttft):len(s.ttft)], censoredTTFT(cr, c.stoppedAt)), append(s.e2e[:len(s.e2e):len(s.e2e)], c.stoppedAt-cr.arrival)
			all[l] = s
		}
	}
	out := make(map[string]PositionStats, len(all))
	for k, s := range all {
		ttft, e2e := sorted(s.ttft), sorted(s.e2e)
		out[k] = PositionStats{Calls: len(e2e), TTFTMeanS: mean(ttft), TTFTP50S: percentile(ttft, 50), TTFTP99S: percentile(ttft, 99),
			E2EMeanS: mean(e2e), E2EP99S: percentile(e2e, 99)}
	}
	return out
}

// censoredTTFT is an unfinished call's TTFT at a stop: its first token, or
// the stop when it had none.
func censoredTTFT(r *callRec, stop float64) float64 {
	if r.hasFirst {
		return r.first - r.arrival
	}
	return stop - r.arrival
}
