package predictor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// ModeLedStateFile is the file under a state directory that holds a
// ModeLed's window modes and order scores (beside ExpertMixStateFile), so
// that a restarted deployment predicts as it did before.
const ModeLedStateFile = "length-mode.json"

const (
	modeLedKind    = "pitstop.mode_led"
	modeLedVersion = 1
)

// modeLedFile is ModeLed's state on disk. The windows are saved as counted,
// not rebuilt from the lengths: which of two equally dense windows wins
// depends on the order the lengths came in.
type modeLedFile struct {
	stateHeader
	Fallback int                 `json:"fallback"`
	Window   int                 `json:"order_window"`
	Classes  []modeClassState    `json:"classes"`
	Recent   [orderWindow][3]int `json:"recent"` // mixture's point, mode, actual
	Seen     int                 `json:"seen"`
	Wrong    [2]float64          `json:"wrong"`
	Pairs    float64             `json:"pairs"`
	// Trade is the HitTrade's sums (absent in files written before it:
	// restored as a trade that has not paid yet).
	Trade *hitTradeState `json:"hit_trade,omitempty"`
}

type hitTradeState struct {
	Hits   float64 `json:"hits"`
	AbsErr float64 `json:"abs_err"`
	Moves  int     `json:"moves"`
}

type modeClassState struct {
	Level     int      `json:"level"`
	LastTool  string   `json:"last_tool,omitempty"`
	ToolClass string   `json:"tool_class,omitempty"`
	Prev      int      `json:"prev"`
	Last      int      `json:"last"`
	N         int      `json:"n"`
	Best      int      `json:"best"`
	Top       int      `json:"top"`
	Counts    [][2]int `json:"counts"` // window centre, lengths within ±5
}

// Save writes m's state to dir/ModeLedStateFile atomically (a temporary
// file renamed over it).
func (m *ModeLed) Save(dir string) error {
	m.mu.Lock()
	f := modeLedFile{stateHeader: stateHeader{Kind: modeLedKind, Version: modeLedVersion}, Fallback: m.fallback, Window: orderWindow,
		Seen: m.led.seen, Wrong: m.led.wrong, Pairs: m.led.pairs,
		Trade: &hitTradeState{Hits: m.trade.hits, AbsErr: m.trade.absErr, Moves: m.trade.moves}}
	for i, s := range m.led.recent {
		f.Recent[i] = [3]int{s.pts[0], s.pts[1], s.actual}
	}
	for c, w := range m.modes.classes {
		cs := modeClassState{Level: c.level, LastTool: c.lastTool, ToolClass: c.toolClass, Prev: c.prev, Last: c.last,
			N: w.n, Best: w.best, Top: w.top, Counts: make([][2]int, 0, len(w.count))}
		for centre, n := range w.count {
			cs.Counts = append(cs.Counts, [2]int{centre, n})
		}
		f.Classes = append(f.Classes, cs)
	}
	m.mu.Unlock()
	return saveJSONState(dir, ModeLedStateFile, "length window modes", f)
}

// Restore loads the state Save wrote to dir. No file is not an error (found
// is false). A file that is not valid JSON, not a ModeLed's, of another
// fallback (another model) or with counts no run of Observe gives is an
// error, and m is left as it was: the caller starts fresh.
func (m *ModeLed) Restore(dir string) (found bool, err error) {
	return restoreStateFile(dir, ModeLedStateFile, "length window modes", m.restore)
}

func (m *ModeLed) restore(data []byte) error {
	var f modeLedFile
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	if err := f.check(modeLedKind, modeLedVersion); err != nil {
		return err
	}
	switch {
	case f.Fallback != m.fallback:
		return fmt.Errorf("saved for a model with training median %d, this one's is %d", f.Fallback, m.fallback)
	case f.Window != orderWindow:
		return fmt.Errorf("order window %d, want %d", f.Window, orderWindow)
	case f.Seen < 0 || !(f.Pairs >= 0) || f.Pairs > float64(f.Seen)*orderWindow || len(f.Classes) > maxModeClasses:
		return errors.New("counts no run of Observe gives")
	}
	for _, w := range f.Wrong {
		if !(w >= 0) || w > f.Pairs {
			return errors.New("more pairs ordered wrongly than scored")
		}
	}
	var trade HitTrade
	if t := f.Trade; t != nil {
		if t.Moves < 0 || !(math.Abs(t.Hits) <= float64(t.Moves)) || math.IsNaN(t.AbsErr) || math.IsInf(t.AbsErr, 0) {
			return errors.New("hit trade: sums no run of Observe gives")
		}
		trade = HitTrade{hits: t.Hits, absErr: t.AbsErr, moves: t.Moves}
	}
	classes := make(map[modeClass]*lengthWindows, len(f.Classes))
	for _, cs := range f.Classes {
		c := modeClass{level: cs.Level, lastTool: cs.LastTool, toolClass: cs.ToolClass, prev: cs.Prev, last: cs.Last}
		if c.level < 0 || c.level > modeRootLevel || classes[c] != nil || cs.N < 0 || cs.Top > cs.N || len(cs.Counts) > 0 && cs.N == 0 {
			return fmt.Errorf("window class %+v: not what Observe keeps", c)
		}
		w := &lengthWindows{count: make(map[int]int, len(cs.Counts)), n: cs.N, best: cs.Best, top: cs.Top}
		for _, kv := range cs.Counts {
			if kv[1] < 0 || kv[1] > cs.Top {
				return fmt.Errorf("window class %+v: a window counts %d of %d lengths, above the densest", c, kv[1], cs.N)
			}
			w.count[kv[0]] = kv[1]
		}
		classes[c] = w
	}
	var led OrderLed
	led.seen, led.wrong, led.pairs = f.Seen, f.Wrong, f.Pairs
	for i, r := range f.Recent {
		led.recent[i] = orderLedSegment{pts: [2]int{r[0], r[1]}, actual: r[2]}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.modes.classes, m.led, m.trade = classes, led, trade
	return nil
}
