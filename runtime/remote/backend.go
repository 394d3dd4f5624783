package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Backend is one OpenAI-compatible server behind the router.
type Backend struct {
	spec   Spec
	name   string
	client *http.Client
	inline *inlineTransport // the client's transport when it is inline; nil otherwise
	apiKey string
	adm    *admission
	slots  *slotTable // llama.cpp with slots=N; nil otherwise
	met    backendMetrics
	// chatURL is the backend's chat-completions endpoint, parsed once.
	chatURL *url.URL
	// header is a generation's request headers, shared read-only by its
	// requests (a transport does not change a request).
	header http.Header
	// post is a generation's request head as the inline transport writes
	// it (chatURL and header, written once by net/http).
	post postTemplate
	// wires are body's *wireScratch.
	wires sync.Pool
	// events are readStream's *eventDecoder: one lives for a reply, and
	// goes back for the next unless the reply was malformed.
	events sync.Pool
	// work is the tokens of the calls in flight or queued here (the
	// balancer's RunningTokens).
	work atomic.Int64

	mu        sync.Mutex
	models    []string
	up        bool
	draining  bool
	lastErr   string
	checked   time.Time
	calls     int64
	failures  int64
	prompt    int64
	cached    int64
	latencyMs float64   // moving average of a generation's time
	strikes   int       // calls failed in a row (downStrikes marks it down)
	lastOK    time.Time // when a call last succeeded
	seen      bool      // the first health check was recorded
}

func newBackend(s Spec, client *http.Client) (*Backend, error) {
	b := &Backend{spec: s, name: s.Name(), client: client, adm: newAdmission(s.MaxInflight), up: true}
	u, err := url.Parse(s.URL + "/v1/chat/completions")
	if err != nil {
		return nil, fmt.Errorf("backend %s: %v", b.name, err)
	}
	b.chatURL = u
	b.header = http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}}
	if s.Kind == KindLlamaCpp && s.Slots > 0 {
		b.slots = newSlotTable(s.Slots)
	}
	if s.APIKeyEnv != "" {
		b.apiKey = os.Getenv(s.APIKeyEnv)
		if b.apiKey == "" {
			return nil, fmt.Errorf("backend %s: $%s is empty or not set (api-key-env)", b.name, s.APIKeyEnv)
		}
		b.header.Set("Authorization", "Bearer "+b.apiKey)
	}
	if b.post, err = newPostTemplate(b.chatURL, b.header); err != nil {
		return nil, fmt.Errorf("backend %s: %v", b.name, err)
	}
	return b, nil
}

// BackendInfo is a backend as /v1/backends shows it.
type BackendInfo struct {
	Name        string   `json:"name"`
	URL         string   `json:"url"`
	Kind        Kind     `json:"kind"`
	Weight      float64  `json:"weight"`
	Models      []string `json:"models"`
	Up          bool     `json:"up"`
	Draining    bool     `json:"draining"`
	LastError   string   `json:"last_error,omitempty"`
	InFlight    int      `json:"in_flight"`
	Queued      int      `json:"queued"`
	Limit       int      `json:"inflight_limit"`
	LimitFixed  bool     `json:"inflight_limit_fixed"`
	Calls       int64    `json:"calls"`
	Failures    int64    `json:"failures"`
	PrefixHit   float64  `json:"prefix_hit_rate"`
	LatencyMs   float64  `json:"latency_ms"`
	CheckedUnix int64    `json:"checked"`
}

func (b *Backend) info() BackendInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	hit := 0.0
	if b.prompt > 0 {
		hit = float64(b.cached) / float64(b.prompt)
	}
	return BackendInfo{Name: b.name, URL: b.spec.URL, Kind: b.spec.Kind, Weight: b.spec.Weight, Models: slices.Clone(b.models),
		Up: b.up, Draining: b.draining, LastError: b.lastErr, InFlight: b.adm.running(), Queued: b.adm.queued(),
		Limit: b.adm.currentLimit(), LimitFixed: b.adm.fixed, Calls: b.calls, Failures: b.failures, PrefixHit: hit,
		LatencyMs: b.latencyMs, CheckedUnix: b.checked.Unix()}
}

// available reports whether new calls may go to the backend.
func (b *Backend) available() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.up && !b.draining
}

func (b *Backend) isUp() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.up }

func (b *Backend) serves(model string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.models, model)
}

func (b *Backend) firstModel() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.models) == 0 {
		return ""
	}
	return b.models[0]
}

// setUp records the outcome of a health check or a call; it reports
// whether the backend's state changed.
func (b *Backend) setUp(up bool, why string) bool {
	b.mu.Lock()
	changed := b.up != up
	b.up = up
	if !up {
		b.lastErr = why
	}
	b.mu.Unlock()
	if !up {
		b.adm.evict()
	}
	return changed
}

// downStrikes is how many calls in a row must fail on a backend before
// it is marked down: one failed connection under load should not turn a
// lone backend away for a whole health interval (the failed call itself
// moves at once). A failed health check marks it down at the first.
const downStrikes = 3

// struck records a call that failed on the backend; it reports whether the
// backend is to be marked down.
func (b *Backend) struck() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.strikes++
	return b.strikes >= downStrikes
}

// servedSince reports whether a call succeeded on the backend after t.
func (b *Backend) servedSince(t time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastOK.After(t)
}

// check asks the backend for its models: the health check.
func (b *Backend) check(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.spec.URL+"/v1/models", nil)
	if err != nil {
		return err
	}
	resp, err := b.ask(req, "GET /v1/models")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return fmt.Errorf("GET /v1/models: not a model list: %v", err)
	}
	models := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		models = append(models, m.ID)
	}
	b.mu.Lock()
	b.models, b.checked = models, time.Now()
	b.mu.Unlock()
	return nil
}

// ask does one of the backend's own requests (not a generation: those go
// through the post template) with its API key; an answer other than 200 OK
// is an error that names what was asked and says the server's message.
func (b *Backend) ask(req *http.Request, what string) (*http.Response, error) {
	if b.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+b.apiKey)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, fmt.Errorf("%s: %s", what, errorMessage(resp.StatusCode, resp.Body))
	}
	return resp, nil
}

// booked records a finished generation.
func (b *Backend) booked(d time.Duration, u Usage, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if failed {
		b.failures++
		return
	}
	b.strikes = 0
	b.lastOK = time.Now()
	ms := float64(d) / float64(time.Millisecond)
	if b.latencyMs == 0 {
		b.latencyMs = ms
	} else {
		b.latencyMs += 0.1 * (ms - b.latencyMs)
	}
	if u.CachedTokens >= 0 {
		b.prompt += int64(u.PromptTokens)
		b.cached += int64(u.CachedTokens)
	}
}
