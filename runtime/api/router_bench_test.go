package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/remote"
)

// BenchmarkRouterCall is the router's whole per-call path but the sockets:
// the client's request decoded, the call set up, the generation on a
// backend (pick, admission, request encoded, stream read), the answer
// encoded to the client and the metrics; the backend answers in memory.
// routerload's overhead mode measures the same path with loopback HTTP.
//
// "long" is a non-stream call with an agent's conversation: 81 messages,
// 35 KB, where the client's request's decode is most of the path.
func BenchmarkRouterCall(b *testing.B) {
	var long []string
	for i := range 40 {
		long = append(long, `{"role":"user","content":"`+strings.Repeat("lorem ipsum dolor sit amet\\n", 30)+`"}`,
			`{"role":"assistant","content":"ok `+strconv.Itoa(i)+`"}`)
	}
	bodies := map[string]string{
		"json":   `{"model":"m","messages":[{"role":"user","content":"call-1"}]}`,
		"stream": `{"model":"m","messages":[{"role":"user","content":"call-1"}],"stream":true}`,
		"long":   `{"model":"m","messages":[` + strings.Join(long, ",") + `,{"role":"user","content":"call-1"}]}`,
	}
	for _, name := range []string{"json", "stream", "long"} {
		b.Run(name, func(b *testing.B) {
			h := routerServer(b, "http://a:1,max-inflight=1024", testutil.CannedTransport{}).Handler()
			body := bodies[name]
			b.ReportAllocs()
			var before, after goruntime.MemStats
			goruntime.ReadMemStats(&before)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "done") {
						b.Fatalf("HTTP %d: %s", w.Code, w.Body)
					}
				}
			})
			goruntime.ReadMemStats(&after)
			// The collector's work follows the bytes allocated: its cycles
			// per thousand calls at this benchmark's (small) live heap.
			b.ReportMetric(float64(after.NumGC-before.NumGC)/float64(b.N)*1000, "GCs/1000calls")
		})
	}
}

// BenchmarkRouterLoopback is BenchmarkRouterCall with the sockets: the
// client, the router's HTTP server (behind GuardBodies, as serve runs it)
// and a backend that answers at once, all on loopback in this process, one
// call at a time. Its CPU per call (cpu-µs/call: the process's user and
// system time, the client's and the backend's included) and its
// allocations are what a change to the router's path costs or saves, with
// the hand-offs between goroutines and threads that the in-memory
// benchmark does not have.
//
// Its sub-benchmarks name the backend transport (transport=inline, the
// default, or nethttp): run them in one go test run to compare them.
func BenchmarkRouterLoopback(b *testing.B) {
	for _, tr := range []string{remote.TransportInline, remote.TransportNetHTTP} {
		b.Run("transport="+tr, func(b *testing.B) { benchmarkRouterLoopback(b, tr) })
	}
}

func benchmarkRouterLoopback(b *testing.B, transport string) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/models") {
			_, _ = io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, testutil.CannedReply)
	}))
	defer backend.Close()
	srv := routerServer(b, backend.URL+",max-inflight=1024,transport="+transport, nil)
	router := httptest.NewServer(GuardBodies(srv.Handler(), DefaultBodyReadTimeout))
	defer router.Close()
	client := router.Client()
	body := `{"model":"m","messages":[{"role":"user","content":"call-1"}]}`
	call := func() {
		resp, err := client.Post(router.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), "done") {
			b.Fatalf("HTTP %d: %s", resp.StatusCode, data)
		}
	}
	timeCalls(b, call)
}

// timeCalls runs call once to open the connections, then b.N times on the
// clock, and reports the process's CPU per call beside the time.
func timeCalls(b *testing.B, call func()) {
	call()
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for range b.N {
		call()
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/call")
}

// processCPU is this process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// routerServer is an API server whose runtime routes to the one backend
// spec names (transport, when set, carries its requests), closed with b.
func routerServer(b *testing.B, spec string, transport http.RoundTripper) *Server {
	b.Helper()
	r := newRemote(b, remote.Config{Transport: transport, HealthInterval: time.Hour}, spec)
	quiet := slog.New(slog.DiscardHandler)
	rt, err := runtime.New(runtime.Config{Remote: r, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	srv, err := New(Config{Runtime: rt, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}
