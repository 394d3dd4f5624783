package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

func newTestExecutor(t *testing.T, cfg ExecutorConfig, tools ...*Tool) *Executor {
	t.Helper()
	r := NewRegistry()
	for _, tool := range tools {
		if err := r.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ex, err := NewExecutor(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	return ex
}

func TestUnknownTool(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "b", "", nil), mustTool(t, "a", "", nil))
	res := ex.Run(context.Background(), Call{ID: "1", Name: "nope", Arguments: "{}"})
	if !res.IsError || res.Content != `error: unknown tool "nope"; registered tools: a, b` || !errors.Is(res.Err, ErrUnknownTool) {
		t.Fatalf("%+v", res)
	}
	empty := newTestExecutor(t, ExecutorConfig{})
	res = empty.Run(context.Background(), Call{Name: "x\xff"})
	if !strings.Contains(res.Content, "no tools are registered") || !utf8.ValidString(res.Content) || !utf8.ValidString(res.Name) {
		t.Fatalf("%+v", res)
	}
}

func TestValidationErrorIsResult(t *testing.T) {
	schema := `{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`
	ran := false
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "calculator", schema, func(context.Context, json.RawMessage) (string, error) {
		ran = true
		return "", nil
	}))
	res := ex.Run(context.Background(), Call{ID: "call_1", Name: "calculator", Arguments: `{"expr":"1+1"}`})
	want := `error: invalid arguments for tool "calculator": at root: missing property 'expression'`
	if !res.IsError || res.Content != want || res.CallID != "call_1" || res.Name != "calculator" {
		t.Fatalf("got %+v\nwant content %q", res, want)
	}
	if ran {
		t.Fatal("handler ran on invalid arguments")
	}
}

func TestPanicRecovered(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "boom", "", func(context.Context, json.RawMessage) (string, error) {
		var m map[string]int
		m["x"] = 1 // nil map write
		return "", nil
	}))
	res := ex.Run(context.Background(), Call{Name: "boom"})
	if !res.IsError || !errors.Is(res.Err, ErrPanic) || !strings.HasPrefix(res.Content, `error: tool "boom" panicked: assignment to entry in nil map`) {
		t.Fatalf("%+v", res)
	}
	// The executor keeps working.
	if res := ex.Run(context.Background(), Call{Name: "boom"}); !res.IsError {
		t.Fatal("second call")
	}
}

func TestTimeoutOfHangingHandler(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "hang", "", func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-release // ignores ctx on purpose
		return "late", nil
	}, WithTimeout(50*time.Millisecond)))
	res := ex.Run(context.Background(), Call{Name: "hang"})
	if !res.IsError || !errors.Is(res.Err, ErrTimeout) || !errors.Is(res.Err, context.DeadlineExceeded) ||
		res.Content != `error: tool "hang" timed out after 50ms` {
		t.Fatalf("%+v", res)
	}
}

func TestDefaultTimeoutAndCtxAwareHandler(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{DefaultTimeout: 30 * time.Millisecond}, mustTool(t, "wait", "", func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	res := ex.Run(context.Background(), Call{Name: "wait"})
	if !errors.Is(res.Err, ErrTimeout) || !strings.Contains(res.Content, "timed out after 30ms") {
		t.Fatalf("%+v", res)
	}
}

func TestCancellation(t *testing.T) {
	started := make(chan struct{})
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "slow", "", func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res := ex.Run(ctx, Call{Name: "slow"})
	if !res.IsError || !errors.Is(res.Err, context.Canceled) || res.Content != `error: tool "slow" canceled: context canceled` {
		t.Fatalf("%+v", res)
	}
	// Already-cancelled context: the handler does not run.
	res = ex.Run(ctx, Call{Name: "slow"})
	if !errors.Is(res.Err, context.Canceled) || !strings.Contains(res.Content, "not run") {
		t.Fatalf("%+v", res)
	}
}

func TestCancelWhileWaitingForSlot(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "one", "", func(ctx context.Context, _ json.RawMessage) (string, error) {
		started <- struct{}{}
		<-release
		return "ok", nil
	}, WithMaxConcurrency(1)))
	done := make(chan Result)
	go func() { done <- ex.Run(context.Background(), Call{Name: "one"}) }()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res := ex.Run(ctx, Call{Name: "one"})
	if !res.IsError || !errors.Is(res.Err, context.DeadlineExceeded) || !strings.Contains(res.Content, "gave up waiting for a free slot") {
		t.Fatalf("%+v", res)
	}
	close(release)
	if r := <-done; r.IsError || r.Content != "ok" {
		t.Fatalf("first call: %+v", r)
	}
}

func TestOutputTruncated(t *testing.T) {
	big := strings.Repeat("é", 5<<20) // 10 MiB of 2-byte runes
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "big", "", func(context.Context, json.RawMessage) (string, error) {
		return big, nil
	}))
	res := ex.Run(context.Background(), Call{Name: "big"})
	if res.IsError || !res.Truncated {
		t.Fatalf("IsError=%v Truncated=%v", res.IsError, res.Truncated)
	}
	kept := DefaultMaxOutputBytes // 65536 is even: cut between runes
	note := fmt.Sprintf("\n…[truncated: %d bytes omitted]", len(big)-kept)
	if !strings.HasSuffix(res.Content, note) || len(res.Content) != kept+len(note) {
		t.Fatalf("len %d, tail %q", len(res.Content), res.Content[len(res.Content)-60:])
	}
	if !utf8.ValidString(res.Content) {
		t.Fatal("invalid UTF-8")
	}
}

func TestOutputCutOnRuneBoundary(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "odd", "", func(context.Context, json.RawMessage) (string, error) {
		return "ab€€€", nil // € is 3 bytes
	}, WithMaxOutputBytes(4)))
	res := ex.Run(context.Background(), Call{Name: "odd"})
	if res.Content != "ab\n…[truncated: 9 bytes omitted]" || !res.Truncated {
		t.Fatalf("%q", res.Content)
	}
}

func TestInvalidUTF8Sanitised(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "bin", "", func(context.Context, json.RawMessage) (string, error) {
		return "ok\xff\xfe-\xc3", nil
	}), mustTool(t, "binerr", "", func(context.Context, json.RawMessage) (string, error) {
		return "", errors.New("bad \xff byte")
	}))
	res := ex.Run(context.Background(), Call{Name: "bin"})
	if res.Content != "ok\uFFFD-\uFFFD" || !utf8.ValidString(res.Content) {
		t.Fatalf("%q", res.Content)
	}
	res = ex.Run(context.Background(), Call{Name: "binerr"})
	if !utf8.ValidString(res.Content) || !strings.Contains(res.Content, "bad \uFFFD byte") {
		t.Fatalf("%q", res.Content)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	const limit = 3
	var inFlight, maxSeen atomic.Int32
	tool := mustTool(t, "limited", "", func(ctx context.Context, _ json.RawMessage) (string, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxSeen.Load()
			if n <= m || maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		// Hold the slot until the limit is reached (or a while passed), so
		// that the limit is actually exercised.
		deadline := time.Now().Add(2 * time.Second)
		for inFlight.Load() < limit && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(2 * time.Millisecond)
		return "ok", nil
	}, WithMaxConcurrency(limit))
	ex := newTestExecutor(t, ExecutorConfig{}, tool)
	calls := make([]Call, 20)
	for i := range calls {
		calls[i] = Call{ID: fmt.Sprint(i), Name: "limited"}
	}
	for _, r := range ex.RunAll(context.Background(), calls) {
		if r.IsError {
			t.Fatalf("%+v", r)
		}
	}
	if m := maxSeen.Load(); m != limit {
		t.Fatalf("max in flight = %d, want %d", m, limit)
	}
}

func TestRunAllOrderAndParallelism(t *testing.T) {
	const n = 6
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	tool := mustTool(t, "barrier", `{"type":"object","properties":{"i":{"type":"integer"}}}`, func(ctx context.Context, args json.RawMessage) (string, error) {
		arrived.Done()
		select { // returns only once every call is running: proves parallelism
		case <-all:
		case <-ctx.Done():
			return "", errors.New("calls did not run in parallel")
		}
		var a struct{ I int }
		_ = json.Unmarshal(args, &a)
		time.Sleep(time.Duration(n-a.I) * time.Millisecond) // finish in reverse order
		return fmt.Sprint("r", a.I), nil
	}, WithTimeout(5*time.Second))
	ex := newTestExecutor(t, ExecutorConfig{}, tool)
	var calls []Call
	for i := range n {
		calls = append(calls, Call{ID: fmt.Sprint("id", i), Name: "barrier", Arguments: fmt.Sprintf(`{"i":%d}`, i)})
	}
	results := ex.RunAll(context.Background(), calls)
	for i, r := range results {
		if r.IsError || r.CallID != fmt.Sprint("id", i) || r.Content != fmt.Sprint("r", i) {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
	if len(ex.RunAll(context.Background(), nil)) != 0 {
		t.Fatal("RunAll(nil)")
	}
}

type recObserver struct {
	mu   sync.Mutex
	seen []string
}

func (o *recObserver) ToolFinished(name string, d time.Duration, isError, cached bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, fmt.Sprintf("%s err=%v cached=%v", name, isError, cached))
}

func TestCacheHitMissTTL(t *testing.T) {
	var runs atomic.Int32
	schema := `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}`
	h := func(ctx context.Context, args json.RawMessage) (string, error) {
		runs.Add(1)
		var a struct{ A, B int }
		_ = json.Unmarshal(args, &a)
		if a.A < 0 {
			return "", errors.New("negative")
		}
		return fmt.Sprint(a.A + a.B), nil
	}
	obs := &recObserver{}
	ex := newTestExecutor(t, ExecutorConfig{Observer: obs},
		mustTool(t, "add", schema, h, WithCache(500*time.Millisecond)),
		mustTool(t, "add_nocache", schema, h))
	ctx := context.Background()

	r1 := ex.Run(ctx, Call{Name: "add", Arguments: `{"a":1,"b":2}`})
	r2 := ex.Run(ctx, Call{Name: "add", Arguments: `{ "b": 2, "a": 1 }`}) // same canonical args
	if r1.Cached || !r2.Cached || r2.Content != "3" || runs.Load() != 1 {
		t.Fatalf("r1=%+v r2=%+v runs=%d", r1, r2, runs.Load())
	}
	if r3 := ex.Run(ctx, Call{Name: "add", Arguments: `{"a":2,"b":2}`}); r3.Cached || r3.Content != "4" || runs.Load() != 2 {
		t.Fatalf("different args: %+v", r3)
	}
	// Errors are not cached.
	ex.Run(ctx, Call{Name: "add", Arguments: `{"a":-1}`})
	if r := ex.Run(ctx, Call{Name: "add", Arguments: `{"a":-1}`}); r.Cached || !r.IsError || runs.Load() != 4 {
		t.Fatalf("error cached: %+v runs=%d", r, runs.Load())
	}
	// Non-idempotent tools are not cached.
	ex.Run(ctx, Call{Name: "add_nocache", Arguments: `{"a":1,"b":2}`})
	if r := ex.Run(ctx, Call{Name: "add_nocache", Arguments: `{"a":1,"b":2}`}); r.Cached || runs.Load() != 6 {
		t.Fatalf("non-idempotent cached: %+v", r)
	}
	// TTL expiry.
	time.Sleep(800 * time.Millisecond)
	if r := ex.Run(ctx, Call{Name: "add", Arguments: `{"a":1,"b":2}`}); r.Cached || runs.Load() != 7 {
		t.Fatalf("after TTL: %+v runs=%d", r, runs.Load())
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := "add err=false cached=false|add err=false cached=true|add err=false cached=false|add err=true cached=false|add err=true cached=false|add_nocache err=false cached=false|add_nocache err=false cached=false|add err=false cached=false"
	if got := strings.Join(obs.seen, "|"); got != want {
		t.Fatalf("observer:\n got %s\nwant %s", got, want)
	}
}

func TestCacheDisabledAndReRegistration(t *testing.T) {
	var runs atomic.Int32
	h := func(ctx context.Context, args json.RawMessage) (string, error) { runs.Add(1); return "v", nil }
	ex := newTestExecutor(t, ExecutorConfig{CacheMaxBytes: -1}, mustTool(t, "c", "", h, WithCache(time.Minute)))
	ex.Run(context.Background(), Call{Name: "c"})
	if r := ex.Run(context.Background(), Call{Name: "c"}); r.Cached || runs.Load() != 2 {
		t.Fatal("cache should be off")
	}

	ex2 := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "c", "", h, WithCache(time.Minute)))
	ex2.Run(context.Background(), Call{Name: "c"})
	ex2.Registry().Remove("c")
	ex2.Registry().MustRegister(mustTool(t, "c", "", func(context.Context, json.RawMessage) (string, error) { return "new", nil }, WithCache(time.Minute)))
	if r := ex2.Run(context.Background(), Call{Name: "c"}); r.Cached || r.Content != "new" {
		t.Fatalf("re-registered tool served stale result: %+v", r)
	}
}

func TestCallIDInContext(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "id", "", func(ctx context.Context, _ json.RawMessage) (string, error) {
		return CallIDFromContext(ctx), nil
	}))
	if r := ex.Run(context.Background(), Call{ID: "call_42", Name: "id"}); r.Content != "call_42" {
		t.Fatalf("%+v", r)
	}
}

func TestResultTimes(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "sleep", "", func(context.Context, json.RawMessage) (string, error) {
		time.Sleep(5 * time.Millisecond)
		return "", nil
	}))
	r := ex.Run(context.Background(), Call{Name: "sleep"})
	if r.Started.IsZero() || r.Finished.Before(r.Started) || r.Duration() < 5*time.Millisecond {
		t.Fatalf("%+v", r)
	}
}

func TestNewExecutorErrors(t *testing.T) {
	if _, err := NewExecutor(nil, ExecutorConfig{}); err == nil {
		t.Fatal("nil registry")
	}
	if _, err := NewExecutor(NewRegistry(), ExecutorConfig{DefaultTimeout: -1}); err == nil {
		t.Fatal("negative timeout")
	}
}

func TestDoubleEncodedArguments(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "echo", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`, nil))
	r := ex.Run(context.Background(), Call{Name: "echo", Arguments: `"{\"a\": 1}"`})
	if r.IsError || r.Content != `{"a": 1}` {
		t.Fatalf("%+v", r)
	}
	r = ex.Run(context.Background(), Call{Name: "echo", Arguments: `"just text"`})
	if !r.IsError || !strings.Contains(r.Content, "got string, want object") {
		t.Fatalf("%+v", r)
	}
}

func TestHandlerGoexit(t *testing.T) {
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "exit", "", func(context.Context, json.RawMessage) (string, error) {
		runtime.Goexit()
		return "", nil
	}, WithTimeout(time.Minute)))
	r := ex.Run(context.Background(), Call{Name: "exit"})
	if !r.IsError || !strings.Contains(r.Content, "exited without returning") {
		t.Fatalf("%+v", r)
	}
}
