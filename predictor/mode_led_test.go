package predictor

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// modeLedStream is a deployment where the argument class of the call a
// segment reads decides its length and the mixture's point does not follow
// it: the window mode orders the segments better and is chosen.
func modeLedStream(n int) (ins []Input, mix, actual []int) {
	for i := range n {
		class, length := "prog:cat", 200+i%3
		if i%2 == 1 {
			class, length = "prog:ls", 20+i%5
		}
		ins = append(ins, Input{LastTool: "bash", LastToolClass: class, History: History{Calls: 1, LastOutputTokens: 50}})
		mix = append(mix, 100+(i*37)%50) // unrelated to the length
		actual = append(actual, length)
	}
	return ins, mix, actual
}

func TestModeLedChoosesTheModeWhereItOrdersBetter(t *testing.T) {
	m := NewModeLed(77)
	ins, mix, actual := modeLedStream(60)
	if p, mode := m.Predict(ins[0], mix[0]); p != mix[0] || mode != 77 {
		t.Fatalf("fresh: point %d, mode %d; want the mixture's %d and the fallback 77", p, mode, mix[0])
	}
	for i := range ins {
		_, mode := m.Predict(ins[i], mix[i])
		m.Observe(ins[i], mix[i], mode, actual[i])
	}
	if !m.ModeChosen() {
		t.Fatal("the mode ordered every pair of classes right and the mixture did not, yet it is not chosen")
	}
	if p, _ := m.Predict(ins[0], 123); p < 195 || p > 207 {
		t.Fatalf("after cat: %d, want the cat window (200-202)", p)
	}
	var nilLed *ModeLed
	if p, mode := nilLed.Predict(ins[0], 42); p != 42 || mode != 42 {
		t.Fatalf("a nil ModeLed predicts %d/%d, want the mixture's 42", p, mode)
	}
}

// Save and Restore carry the modes and the order scores across a restart:
// the restored ModeLed predicts what the saved one did; another model's
// file or a corrupt one is refused and leaves a fresh state.
func TestModeLedStatePersists(t *testing.T) {
	dir := t.TempDir()
	m := NewModeLed(77)
	ins, mix, actual := modeLedStream(60)
	for i := range ins {
		_, mode := m.Predict(ins[i], mix[i])
		m.Observe(ins[i], mix[i], mode, actual[i])
	}
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	again := NewModeLed(77)
	if found, err := again.Restore(dir); !found || err != nil {
		t.Fatalf("restore: found %v, %v", found, err)
	}
	for i, in := range ins[:8] {
		p1, m1 := m.Predict(in, mix[i])
		p2, m2 := again.Predict(in, mix[i])
		if p1 != p2 || m1 != m2 {
			t.Fatalf("segment %d: restored predicts %d/%d, saved %d/%d", i, p2, m2, p1, m1)
		}
	}
	// One more segment each: the order scores and windows go on alike.
	m.Observe(ins[0], 1, 5, 9)
	again.Observe(ins[0], 1, 5, 9)
	if a, b := m.ModeChosen(), again.ModeChosen(); a != b {
		t.Fatalf("after one more segment: chosen %v and %v", a, b)
	}
	if found, err := NewModeLed(12).Restore(dir); err == nil || found {
		t.Fatal("another model's modes (training median 12, saved 77) restored")
	}
	if found, err := NewModeLed(77).Restore(t.TempDir()); found || err != nil {
		t.Fatalf("no file: found %v, %v", found, err)
	}
	path := filepath.Join(dir, ModeLedStateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"kind":"pitstop.mode_led"`, strings.Replace(string(data), `"pairs":`, `"pairs":-`, 1)} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		fresh := NewModeLed(77)
		if _, err := fresh.Restore(dir); err == nil {
			t.Fatalf("restored a corrupt file %.60q", bad)
		}
		if fresh.ModeChosen() {
			t.Fatal("a refused file left state behind")
		}
	}
}

// Predict, Observe and Save meet on the engine's goroutine, the handlers'
// and the learner's: run under -race.
func TestModeLedConcurrentUse(t *testing.T) {
	m := NewModeLed(10)
	ins, mix, actual := modeLedStream(40)
	dir := t.TempDir()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range ins {
				_, mode := m.Predict(ins[i], mix[i])
				m.Observe(ins[i], mix[i], mode, actual[i])
				if g == 0 && i%10 == 0 {
					if err := m.Save(dir); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
}
