package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// slotTable gives each program a slot of a llama.cpp server (id_slot), so
// that its context stays in one slot's KV between its calls, and keeps the
// files of the slots saved while their programs wait on tools.
type slotTable struct {
	mu      sync.Mutex
	owner   []string    // program per slot ("" : free)
	used    []time.Time // last use per slot
	program map[string]int
	saved   map[string]string // program → file its slot was saved to
}

func newSlotTable(n int) *slotTable {
	return &slotTable{owner: make([]string, n), used: make([]time.Time, n), program: map[string]int{}, saved: map[string]string{}}
}

// assign returns the program's slot: its own, else a free one, else the
// least recently used (its program's context there is lost: its next turn
// recomputes). restore is the file to restore into it first ("" : none).
func (t *slotTable) assign(program string) (slot int, restore string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	restore = t.saved[program]
	delete(t.saved, program)
	if s, ok := t.program[program]; ok {
		t.used[s] = time.Now()
		return s, restore
	}
	best := 0
	for i := range t.owner {
		if t.owner[i] == "" {
			best = i
			break
		}
		if t.used[i].Before(t.used[best]) {
			best = i
		}
	}
	if old := t.owner[best]; old != "" {
		delete(t.program, old)
	}
	t.owner[best], t.used[best] = program, time.Now()
	t.program[program] = best
	return best, restore
}

// release frees a program's slot; with file set, the slot was saved there.
func (t *slotTable) release(program, file string) (slot int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.program[program]
	if !ok {
		return 0, false
	}
	delete(t.program, program)
	t.owner[s] = ""
	if file != "" {
		t.saved[program] = file
	}
	return s, true
}

// slotFile names a program's saved slot: a hash, so the name is safe on
// the server's disk whatever the program id.
func slotFile(backend, program string) string {
	h := sha256.Sum256([]byte(backend + "\x00" + program))
	return "pitstop-" + hex.EncodeToString(h[:12]) + ".bin"
}

// slotAction is POST /slots/{id}?action=save|restore|erase.
func (b *Backend) slotAction(ctx context.Context, slot int, action, file string) error {
	var body []byte
	if file != "" {
		body, _ = json.Marshal(map[string]string{"filename": file})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/slots/%d?action=%s", b.spec.URL, slot, action), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.ask(req, fmt.Sprintf("slot %d %s", slot, action))
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// DefaultSwapAfter is the predicted tool time from which a llama.cpp
// program's slot is saved (or erased) while the tool runs.
const DefaultSwapAfter = time.Second

// ToolWait tells the router that a program's call waits on tools predicted
// to take predicted, after a turn on backend. On a llama.cpp backend with
// slots, a long wait frees the program's slot for others: saved to a file
// (swap, restored before the program's next turn) when the server can
// save, else erased (discard: the next turn recomputes). It returns the
// handling ("" : the backend keeps the context, preserve by affinity) and
// why.
func (r *Router) ToolWait(ctx context.Context, program, backend string, predicted time.Duration) (handling, reason string) {
	b := r.find(backend)
	if b == nil || b.slots == nil || predicted < r.cfg.SwapAfter {
		return "", ""
	}
	file := ""
	if b.spec.SlotSave {
		file = slotFile(backend, program)
	}
	slot, ok := b.slots.release(program, "")
	if !ok {
		return "", ""
	}
	if file != "" {
		if err := b.slotAction(ctx, slot, "save", file); err != nil {
			r.log.Warn("llama.cpp slot save failed: the program's next turn recomputes", "backend", backend, "slot", slot, "err", err)
			return "discard", fmt.Sprintf("llama.cpp slot %d freed while the tool runs (predicted %v >= %v); saving it failed (%v), so the next turn recomputes", slot, predicted, r.cfg.SwapAfter, err)
		}
		b.slots.mu.Lock()
		b.slots.saved[program] = file
		b.slots.mu.Unlock()
		return "swap", fmt.Sprintf("llama.cpp slot %d saved to %s (--slot-save-path) and freed for other programs while the tool runs (predicted %v >= %v); restored before the next turn", slot, file, predicted, r.cfg.SwapAfter)
	}
	if err := b.slotAction(ctx, slot, "erase", ""); err != nil {
		r.log.Warn("llama.cpp slot erase failed", "backend", backend, "slot", slot, "err", err)
	}
	return "discard", fmt.Sprintf("llama.cpp slot %d erased and freed for other programs while the tool runs (predicted %v >= %v; the server has no --slot-save-path: slot-save=false); the next turn recomputes", slot, predicted, r.cfg.SwapAfter)
}
