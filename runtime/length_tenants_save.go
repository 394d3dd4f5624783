package runtime

// Saving tenants' length states (tenantSteps): an evicted one off the
// caller's goroutine, all of them with the online learner's saves and at
// Close. Each file is written atomically by predictor (a temporary file
// renamed over it).

// saveLater saves t, out of memory and unused, off the caller's goroutine
// (the engine's, when a call ends), then forgets it. Until then it stays in
// out, so that its tenant's next call takes it back rather than an older
// file. Under mu.
func (ts *tenantSteps) saveLater(t *tenantStep) {
	if ts.store == nil {
		delete(ts.out, t.tenant)
		return
	}
	dir := ts.store.dirOf(t.tenant)
	t.pending++
	ts.saves.Go(func() {
		ts.save(t, dir)
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if t.pending--; t.pending == 0 && t.users == 0 && !t.held && ts.out[t.tenant] == t {
			delete(ts.out, t.tenant)
		}
	})
}

// save writes t's state to dir, one save of t at a time so that the last
// written is the newest.
func (ts *tenantSteps) save(t *tenantStep, dir string) {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	saveMixture(t.step.Mix, t.step.Led, dir, ts.log)
}

// saveAll saves every tenant's step in memory (the online learner's saves).
func (ts *tenantSteps) saveAll() {
	if ts == nil {
		return
	}
	ts.mu.Lock()
	store := ts.store
	steps := ts.held.Values()
	for _, t := range ts.out {
		steps = append(steps, t)
	}
	ts.mu.Unlock()
	if store != nil {
		for _, t := range steps {
			ts.save(t, store.dirOf(t.tenant))
		}
	}
}

// close saves every tenant's step in memory and waits for the saves of
// evicted ones (Length.Close, after the calls ended).
func (ts *tenantSteps) close() {
	if ts == nil {
		return
	}
	ts.saveAll()
	ts.saves.Wait()
}
