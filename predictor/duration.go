package predictor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
)

// DurationPredictor predicts how many seconds a tool call will take.
type DurationPredictor interface {
	PredictDuration(tool string) float64
}

// P2Quantile is the P² streaming quantile estimator (Jain & Chlamtac, CACM
// 1985): five markers, O(1) memory and time per observation. Its fields are
// exported for JSON persistence; use NewP2Quantile, Add and Value.
type P2Quantile struct {
	P     float64    `json:"p"`
	N     int64      `json:"n"`
	Q     [5]float64 `json:"q"`    // marker heights (the first N samples, sorted, while N < 5)
	Pos   [5]float64 `json:"pos"`  // marker positions (1-based)
	Want  [5]float64 `json:"want"` // desired positions
	Delta [5]float64 `json:"delta"`
}

// NewP2Quantile estimates the p-quantile, 0 < p < 1.
func NewP2Quantile(p float64) P2Quantile {
	return P2Quantile{P: p, Delta: [5]float64{0, p / 2, p, (1 + p) / 2, 1}}
}

// Add observes x.
func (e *P2Quantile) Add(x float64) {
	if e.N < 5 {
		e.Q[e.N] = x
		e.N++
		sort.Float64s(e.Q[:e.N])
		if e.N == 5 {
			p := e.P
			e.Pos = [5]float64{1, 2, 3, 4, 5}
			e.Want = [5]float64{1, 1 + 2*p, 1 + 4*p, 3 + 2*p, 5}
		}
		return
	}
	e.N++
	var k int
	switch {
	case x < e.Q[0]:
		e.Q[0] = x
		k = 0
	case x >= e.Q[4]:
		e.Q[4] = x
		k = 3
	default:
		for k = 0; k < 3 && x >= e.Q[k+1]; k++ {
		}
	}
	for i := k + 1; i < 5; i++ {
		e.Pos[i]++
	}
	for i := range e.Want {
		e.Want[i] += e.Delta[i]
	}
	for i := 1; i <= 3; i++ {
		d := e.Want[i] - e.Pos[i]
		if (d >= 1 && e.Pos[i+1]-e.Pos[i] > 1) || (d <= -1 && e.Pos[i-1]-e.Pos[i] < -1) {
			s := math.Copysign(1, d)
			q := e.parabolic(i, s)
			if e.Q[i-1] < q && q < e.Q[i+1] {
				e.Q[i] = q
			} else {
				j := i + int(s)
				e.Q[i] += s * (e.Q[j] - e.Q[i]) / (e.Pos[j] - e.Pos[i])
			}
			e.Pos[i] += s
		}
	}
}

func (e *P2Quantile) parabolic(i int, s float64) float64 {
	q, n := &e.Q, &e.Pos
	return q[i] + s/(n[i+1]-n[i-1])*
		((n[i]-n[i-1]+s)*(q[i+1]-q[i])/(n[i+1]-n[i])+
			(n[i+1]-n[i]-s)*(q[i]-q[i-1])/(n[i]-n[i-1]))
}

// Value is the current estimate (exact while fewer than 5 samples were seen;
// NaN before the first).
func (e *P2Quantile) Value() float64 {
	switch {
	case e.N == 0:
		return math.NaN()
	case e.N < 5:
		// Nearest rank over the sorted samples.
		i := int(math.Ceil(e.P*float64(e.N))) - 1
		return e.Q[min(max(i, 0), int(e.N)-1)]
	}
	return e.Q[2]
}

// ToolStats are the running statistics of one tool's durations, in seconds.
type ToolStats struct {
	Count int64      `json:"count"`
	EWMA  float64    `json:"ewma_s"`            // exponentially weighted mean
	Prior float64    `json:"prior_s,omitempty"` // expected duration from the tool's metadata (0: none)
	P50   P2Quantile `json:"p50"`
	P90   P2Quantile `json:"p90"`
}

// DurationEstimator predicts tool durations from what it has seen of each
// tool: an exponentially weighted mean, with P² p50/p90 estimates beside it.
// Until a tool has MinSamples samples the prediction blends in its prior
// (the tool's declared expected duration), weighted by the samples missing.
// It is safe for concurrent use.
type DurationEstimator struct {
	mu         sync.RWMutex
	alpha      float64
	minSamples int
	fallback   float64
	tools      map[string]*ToolStats
}

// DurationOptions configures a DurationEstimator; zero values take the defaults.
type DurationOptions struct {
	Alpha      float64 // EWMA weight of a new sample (0.2)
	MinSamples int     // samples after which the prior no longer counts (5)
	Fallback   float64 // seconds predicted for a tool with no samples and no prior (1)
}

// NewDurationEstimator returns an empty estimator.
func NewDurationEstimator(o DurationOptions) *DurationEstimator {
	if !(o.Alpha > 0 && o.Alpha <= 1) {
		o.Alpha = 0.2
	}
	if o.MinSamples <= 0 {
		o.MinSamples = 5
	}
	if !(o.Fallback > 0) || math.IsInf(o.Fallback, 0) {
		o.Fallback = 1
	}
	return &DurationEstimator{alpha: o.Alpha, minSamples: o.MinSamples, fallback: o.Fallback, tools: map[string]*ToolStats{}}
}

func (d *DurationEstimator) stats(tool string) *ToolStats {
	s := d.tools[tool]
	if s == nil {
		s = &ToolStats{P50: NewP2Quantile(0.5), P90: NewP2Quantile(0.9)}
		d.tools[tool] = s
	}
	return s
}

// SetPrior records the tool's expected duration (from its metadata). A
// negative, NaN or infinite value is ignored.
func (d *DurationEstimator) SetPrior(tool string, seconds float64) {
	if !validSeconds(seconds) {
		return
	}
	d.mu.Lock()
	d.stats(tool).Prior = seconds
	d.mu.Unlock()
}

func validSeconds(s float64) bool { return s >= 0 && !math.IsInf(s, 0) }

// Observe records one finished call of tool that took seconds. A negative,
// NaN or infinite value is ignored.
func (d *DurationEstimator) Observe(tool string, seconds float64) {
	if !validSeconds(seconds) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stats(tool)
	if s.Count == 0 {
		s.EWMA = seconds
	} else {
		s.EWMA += d.alpha * (seconds - s.EWMA)
	}
	s.Count++
	s.P50.Add(seconds)
	s.P90.Add(seconds)
}

// PredictDuration implements DurationPredictor: the EWMA of the tool's
// durations, blended with its prior while it has fewer than MinSamples
// samples; the prior alone before any sample; the fallback for a tool with
// neither.
func (d *DurationEstimator) PredictDuration(tool string) float64 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	s := d.tools[tool]
	switch {
	case s == nil || (s.Count == 0 && s.Prior == 0):
		return d.fallback
	case s.Count == 0:
		return s.Prior
	case s.Prior == 0 || s.Count >= int64(d.minSamples):
		return s.EWMA
	}
	w := float64(s.Count) / float64(d.minSamples)
	return w*s.EWMA + (1-w)*s.Prior
}

// Quantile returns the tool's streaming p50 (q = 0.5) or p90 (q = 0.9)
// estimate, the p90 never below the p50; ok is false for another q or a tool with no samples.
func (d *DurationEstimator) Quantile(tool string, q float64) (v float64, ok bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	s := d.tools[tool]
	if s == nil || s.Count == 0 {
		return 0, false
	}
	switch q {
	case 0.5:
		return s.P50.Value(), true
	case 0.9:
		// Two P² estimators are not ordered with each other: on few or
		// bimodal samples the p90's markers can sit below the p50's. A
		// quantile function never decreases, so the p90 is at least the p50.
		return max(s.P90.Value(), s.P50.Value()), true
	}
	return 0, false
}

// Stats returns a copy of the tool's statistics.
func (d *DurationEstimator) Stats(tool string) (ToolStats, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, ok := d.tools[tool]
	if !ok {
		return ToolStats{}, false
	}
	return *s, true
}

// Tools lists the tools the estimator knows, sorted.
func (d *DurationEstimator) Tools() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	names := make([]string, 0, len(d.tools))
	for n := range d.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

const durationFileVersion = 1

type durationFile struct {
	Version    int                   `json:"version"`
	Alpha      float64               `json:"alpha"`
	MinSamples int                   `json:"min_samples"`
	Fallback   float64               `json:"fallback_s"`
	Tools      map[string]*ToolStats `json:"tools"`
}

// Save writes the estimator as JSON to path atomically (a temporary file in
// the same directory, synced, then renamed over path).
func (d *DurationEstimator) Save(path string) error {
	d.mu.RLock()
	data, err := json.MarshalIndent(durationFile{Version: durationFileVersion, Alpha: d.alpha,
		MinSamples: d.minSamples, Fallback: d.fallback, Tools: d.tools}, "", "  ")
	d.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("save durations: %w", err)
	}
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("save durations: %w", err)
	}
	return nil
}

// LoadDurations reads an estimator that Save wrote.
func LoadDurations(path string) (*DurationEstimator, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load durations: %w", err)
	}
	var f durationFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("load durations %s: %w", path, err)
	}
	if f.Version != durationFileVersion {
		return nil, fmt.Errorf("load durations %s: file version %d, want %d", path, f.Version, durationFileVersion)
	}
	d := NewDurationEstimator(DurationOptions{Alpha: f.Alpha, MinSamples: f.MinSamples, Fallback: f.Fallback})
	for name, s := range f.Tools {
		if s == nil || s.Count < 0 || !validSeconds(s.EWMA) || !validSeconds(s.Prior) ||
			s.P50.P != 0.5 || s.P90.P != 0.9 || s.P50.N != s.Count || s.P90.N != s.Count {
			return nil, fmt.Errorf("load durations %s: tool %q has inconsistent statistics", path, name)
		}
		d.tools[name] = s
	}
	return d, nil
}

// saveStateFile writes data to dir/name atomically, creating dir, for the
// learners' Save methods; what names the state in the error.
func saveStateFile(dir, name, what string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save %s: %w", what, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, name), data); err != nil {
		return fmt.Errorf("save %s: %w", what, err)
	}
	return nil
}

// restoreStateFile reads dir/name, what saveStateFile wrote, and hands it to
// restore. No file is not an error (found is false); an error of restore
// names the file.
func restoreStateFile(dir, name, what string, restore func([]byte) error) (found bool, err error) {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("restore %s: %w", what, err)
	}
	if err := restore(data); err != nil {
		return false, fmt.Errorf("restore %s %s: %w", what, path, err)
	}
	return true, nil
}

// writeFileAtomic replaces path with data so that a reader sees the old or
// the new file, never a part of one.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
