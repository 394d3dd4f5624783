package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeLlama is a llama.cpp server as the router sees it: chat completions
// with id_slot, and POST /slots/{id}?action=save|restore|erase.
type fakeLlama struct {
	*httptest.Server
	mu  sync.Mutex
	log []string // "chat slot=N" and "ACTION slot=N file=F", in order
}

func newFakeLlama(t *testing.T) *fakeLlama {
	f := &fakeLlama{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/models":
			_, _ = io.WriteString(w, `{"data":[{"id":"llama"}]}`)
		case strings.HasPrefix(r.URL.Path, "/slots/"):
			var body struct{ Filename string }
			_ = json.NewDecoder(r.Body).Decode(&body)
			f.mu.Lock()
			f.log = append(f.log, fmt.Sprintf("%s slot=%s file=%s", r.URL.Query().Get("action"), strings.TrimPrefix(r.URL.Path, "/slots/"), body.Filename))
			f.mu.Unlock()
			_, _ = io.WriteString(w, `{}`)
		default:
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			f.mu.Lock()
			f.log = append(f.log, fmt.Sprintf("chat slot=%v cache_prompt=%v", body["id_slot"], body["cache_prompt"]))
			f.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fragmentedToolCalls(w, 0)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeLlama) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.log
	f.log = nil
	return out
}

func TestLlamaSlotsSwap(t *testing.T) {
	f := newFakeLlama(t)
	r := newTestRouter(t, "", f.URL+",kind=llamacpp,slots=1,slot-save=true")
	name := f.Listener.Addr().String()
	gen := func(program string) {
		t.Helper()
		if _, err := r.Generate(context.Background(), userReq(program), name, func(Event) bool { return false }); err != nil {
			t.Fatal(err)
		}
	}
	gen("p")
	if got := f.take(); len(got) != 1 || got[0] != "chat slot=0 cache_prompt=true" {
		t.Fatalf("first turn: %v", got)
	}
	// A long tool: p's slot is saved and freed.
	h, why := r.ToolWait(context.Background(), "p", name, 5*time.Second)
	file := slotFile(name, "p")
	if h != "swap" || !strings.Contains(why, file) {
		t.Errorf("handling %q (%s)", h, why)
	}
	if got := f.take(); len(got) != 1 || got[0] != "save slot=0 file="+file {
		t.Fatalf("at the tool: %v", got)
	}
	// Another program takes the slot meanwhile; p's next turn restores it.
	gen("q")
	gen("p")
	want := []string{"chat slot=0 cache_prompt=true", "restore slot=0 file=" + file, "chat slot=0 cache_prompt=true"}
	if got := f.take(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("after the tool: %v, want %v", got, want)
	}
	// A short tool keeps the slot (preserve).
	if h, _ := r.ToolWait(context.Background(), "p", name, 10*time.Millisecond); h != "" {
		t.Errorf("a short tool got handling %q", h)
	}
	if got := f.take(); len(got) != 0 {
		t.Errorf("a short tool touched the slots: %v", got)
	}
}

func TestLlamaSlotsDiscard(t *testing.T) {
	f := newFakeLlama(t)
	r := newTestRouter(t, "", f.URL+",kind=llamacpp,slots=2")
	name := f.Listener.Addr().String()
	if _, err := r.Generate(context.Background(), userReq("p"), name, func(Event) bool { return false }); err != nil {
		t.Fatal(err)
	}
	f.take()
	if h, _ := r.ToolWait(context.Background(), "p", name, 5*time.Second); h != "discard" {
		t.Errorf("without slot-save: handling %q, want discard", h)
	}
	if got := f.take(); len(got) != 1 || got[0] != "erase slot=0 file=" {
		t.Errorf("slot actions %v", got)
	}
	for _, bad := range []string{"http://a:1,slots=2", "http://a:1,kind=llamacpp,slot-save=true", "http://a:1,kind=llamacpp,slots=0"} {
		if _, err := ParseSpecs([]string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
