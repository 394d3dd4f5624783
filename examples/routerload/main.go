// Command routerload drives a pitstop router (pitstop serve --backend ...)
// with many go-openai clients running tool-using programs, and checks what
// docs/results-router.md reports: no failed call, every server-side tool
// run exactly once, the follow-up calls of a program landing on the
// backend that holds its prefix (their usage reports cached tokens), and
// nothing leaked on any backend (GET /healthz of each).
//
// It registers a webhook tool "lookup" on the router (served by itself), so
// the tool is the router's alone: the backends return its calls and the
// router runs them and continues the conversation on the same backend.
//
//	routerload -router http://127.0.0.1:8080 -backends http://127.0.0.1:8081,http://127.0.0.1:8082 -clients 200 -programs 20
//
// With -overhead-backend ADDR it serves instead a fake backend that answers
// at once on ADDR, sends -rate calls per second through the router (which
// must route to ADDR) for -seconds, open loop, and reports the router's own
// time per call: the client's time less the backend's. With -proxy ADDR
// -proxy-to URL it serves a bare net/http reverse proxy instead, to stand
// where the router stands: the floor of any net/http router.
//
// It exits 0 when every check holds, 1 otherwise.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

type config struct {
	router   string
	backends []string
	clients  int
	programs int
	calls    int
	model    string
	// during, if set, runs while the load runs (e.g. to kill a backend);
	// its argument is the fraction of calls done.
	during func(done float64)
}

// result is what a run measured.
type result struct {
	Calls, Failed, StreamFailed, NonStreamFailed int
	FollowUps, FollowUpsCached                   int
	SharedPrefix                                 int // the most tokens a program's first call found cached
	ToolRuns, ToolDuplicates                     int
	Leaked                                       []string
	P50, P99, Wall                               time.Duration
	Errors                                       []string
	// StartUnixMs is when the load started; FailedAtMs when each failed
	// call ended, in ms after it (the first 100).
	StartUnixMs int64
	FailedAtMs  []int64
}

func main() {
	var c config
	var backends string
	flag.StringVar(&c.router, "router", "http://127.0.0.1:8080", "the router's base URL")
	flag.StringVar(&backends, "backends", "", "comma list of the backends' base URLs (checked for leaks at the end)")
	flag.IntVar(&c.clients, "clients", 200, "concurrent go-openai clients")
	flag.IntVar(&c.programs, "programs", 20, "programs each client runs, one after the other")
	flag.IntVar(&c.calls, "calls", 3, "calls per program, each with a server-side tool round")
	flag.StringVar(&c.model, "model", "pitstop-scripted-test", "model to ask for")
	fake := flag.String("overhead-backend", "", "overhead mode: serve a fake backend that answers at once on this address (the router must route to it) and measure the router's own time per call")
	rate := flag.Float64("rate", 1000, "overhead mode: calls per second, open loop")
	seconds := flag.Float64("seconds", 10, "overhead mode: how long")
	warmup := flag.Float64("warmup", 0, "overhead mode: seconds of the same load before the measured -seconds, not measured (the client's connections open, the router's heap grown)")
	direct := flag.Bool("overhead-direct", false, "overhead mode: send the calls straight to the fake backend (no router): the floor of the measurement, the client's and the fake backend's own HTTP work and two loopback round trips")
	line := flag.Bool("line", false, "overhead mode: print one line (p50, p99, p99.9 and max overhead in ms, achieved calls/s, router CPU %, failed calls) instead of the JSON")
	jsonOut := flag.String("json", "", "overhead mode: also write the JSON result to this file")
	routerPID := flag.Int("router-pid", 0, "overhead mode: the router's process id: report its CPU use over the load (from /proc)")
	proxy := flag.String("proxy", "", "proxy mode: serve on this address a bare net/http reverse proxy to -proxy-to, in place of the router (the floor of a net/http router), until killed")
	proxyTo := flag.String("proxy-to", "", "proxy mode: the backend's base URL")
	execTrace := flag.String("exectrace", "", "overhead and proxy modes: write this process's execution trace (the client's and the fake backend's side, or the proxy's) to this file (go tool trace; scripts/tracetail)")
	flag.Parse()
	stopTrace := func() {}
	if *execTrace != "" {
		var err error
		if stopTrace, err = startExecTrace(*execTrace); err != nil {
			fmt.Fprintln(os.Stderr, "routerload:", err)
			os.Exit(2)
		}
	}
	if *proxy != "" {
		ln, err := net.Listen("tcp", *proxy)
		if err == nil {
			err = serveProxy(ln, *proxyTo)
		}
		fmt.Fprintln(os.Stderr, "routerload:", err)
		os.Exit(1)
	}
	if *fake != "" {
		f, stop, err := serveFake(*fake)
		if err != nil {
			fmt.Fprintln(os.Stderr, "routerload:", err)
			os.Exit(1)
		}
		defer stop()
		target := c.router
		if *direct {
			target = "http://" + *fake
		}
		waitUp(target)
		res, _ := overhead(target, f, *rate, *seconds, *warmup, *routerPID)
		stopTrace()
		res.Direct = *direct
		out, _ := json.MarshalIndent(res, "", "  ")
		if *jsonOut != "" {
			if err := os.WriteFile(*jsonOut, out, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "routerload:", err)
			}
		}
		if *line {
			fmt.Println(res.line())
		} else {
			fmt.Println(string(out))
		}
		if res.Failed > 0 {
			os.Exit(1)
		}
		return
	}
	if backends != "" {
		c.backends = strings.Split(backends, ",")
	}
	res, err := run(context.Background(), c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "routerload:", err)
		os.Exit(1)
	}
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(out))
	if !res.ok() {
		os.Exit(1)
	}
}

// waitUp waits until the router lists a model (its backend is up).
func waitUp(router string) {
	for range 100 {
		resp, err := http.Get(router + "/v1/models")
		if err == nil {
			var l struct{ Data []any }
			_ = json.NewDecoder(resp.Body).Decode(&l)
			resp.Body.Close()
			if len(l.Data) > 0 {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (r *result) ok() bool {
	return r.Failed == 0 && r.ToolDuplicates == 0 && len(r.Leaked) == 0 && r.FollowUps > 0 && float64(r.FollowUpsCached) >= 0.95*float64(r.FollowUps)
}

// webhook serves the lookup tool and counts each call id's runs.
type webhook struct {
	mu   sync.Mutex
	runs map[string]int
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var in struct {
		CallID    string `json:"call_id"`
		Arguments struct {
			Key string `json:"key"`
		} `json:"arguments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.runs[in.CallID]++
	w.mu.Unlock()
	_ = json.NewEncoder(rw).Encode(map[string]string{"content": "value-of-" + in.Arguments.Key})
}

func run(ctx context.Context, c config) (*result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	wh := &webhook{runs: map[string]int{}}
	hs := &http.Server{Handler: wh}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	reg, _ := json.Marshal(map[string]any{"name": "lookup", "description": "Look a key up", "url": "http://" + ln.Addr().String() + "/lookup",
		"parameters": json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`)})
	preq, _ := http.NewRequest(http.MethodPut, c.router+"/v1/tools/lookup", bytes.NewReader(reg))
	preq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(preq)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("registering the lookup tool on the router (PUT /v1/tools/lookup): %s: %s", resp.Status, body)
	}

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = c.clients * 2
	// Program ids of this run only: backends keep earlier runs' prefixes.
	runID := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	res := &result{}
	var mu sync.Mutex
	var lat []time.Duration
	var firstCached, followCached []int
	var done atomic.Int64
	total := int64(c.clients * c.programs * c.calls)
	start := time.Now()
	res.StartUnixMs = start.UnixMilli()
	var wg sync.WaitGroup
	stopDuring := make(chan struct{})
	if c.during != nil {
		go func() {
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stopDuring:
					return
				case <-t.C:
					c.during(float64(done.Load()) / float64(total))
				}
			}
		}()
	}
	for ci := range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range c.programs {
				prog := fmt.Sprintf("%s-c%d-p%d", runID, ci, p)
				cfg := openai.DefaultConfig("")
				cfg.BaseURL = c.router + "/v1"
				cfg.HTTPClient = &http.Client{Transport: header{tr, prog}}
				cl := openai.NewClientWithConfig(cfg)
				// A system message of the program's own: only the backend
				// that ran the program has it cached.
				msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: systemPrompt(prog)}}
				for k := range c.calls {
					key := fmt.Sprintf("%s-%d", prog, k)
					msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: `/call lookup {"key": "` + key + `"}`})
					stream := (ci+p+k)%2 == 1
					t0 := time.Now()
					answer, usage, err := ask(ctx, cl, c.model, msgs, stream)
					d := time.Since(t0)
					done.Add(1)
					mu.Lock()
					res.Calls++
					lat = append(lat, d)
					if err == nil && !strings.Contains(answer, "value-of-"+key) {
						err = fmt.Errorf("answer %q does not quote the tool's result", answer)
					}
					if err != nil {
						res.Failed++
						if stream {
							res.StreamFailed++
						} else {
							res.NonStreamFailed++
						}
						if len(res.FailedAtMs) < 100 {
							res.FailedAtMs = append(res.FailedAtMs, time.Since(start).Milliseconds())
						}
						if len(res.Errors) < 10 {
							res.Errors = append(res.Errors, fmt.Sprintf("%s call %d (stream %v): %v", prog, k, stream, err))
						}
					}
					if err == nil {
						cached := 0
						if usage.PromptTokensDetails != nil {
							cached = usage.PromptTokensDetails.CachedTokens
						}
						if k == 0 {
							firstCached = append(firstCached, cached)
						} else {
							followCached = append(followCached, cached)
						}
					}
					mu.Unlock()
					if err != nil {
						break // the program's conversation is broken: the next program
					}
					msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: answer})
				}
			}
		}()
	}
	wg.Wait()
	close(stopDuring)
	// The prefix every program shares is at most what a first call found
	// cached; a follow-up on its program's backend finds more: the
	// program's system message and its earlier turns.
	shared := slices.Max(append(firstCached, 0))
	if os.Getenv("ROUTERLOAD_DEBUG") != "" {
		fmt.Fprintln(os.Stderr, "first", firstCached, "follow", followCached)
	}
	res.SharedPrefix = shared
	for _, n := range followCached {
		res.FollowUps++
		if n >= shared+minOwnPrefix {
			res.FollowUpsCached++
		}
	}
	res.Wall = time.Since(start)
	slices.Sort(lat)
	if len(lat) > 0 {
		res.P50, res.P99 = lat[(len(lat)-1)/2], lat[(99*len(lat)+99)/100-1]
	}
	wh.mu.Lock()
	for _, n := range wh.runs {
		res.ToolRuns += n
		if n > 1 {
			res.ToolDuplicates++
		}
	}
	wh.mu.Unlock()
	for _, b := range c.backends {
		if msg := leaks(b); msg != "" {
			res.Leaked = append(res.Leaked, msg)
		}
	}
	return res, nil
}

// ask makes one call and returns its answer and the usage the router
// reported.
func ask(ctx context.Context, cl *openai.Client, model string, msgs []openai.ChatCompletionMessage, stream bool) (string, openai.Usage, error) {
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "lookup"}}}
	req := openai.ChatCompletionRequest{Model: model, Messages: msgs, Tools: tools}
	if !stream {
		resp, err := cl.CreateChatCompletion(ctx, req)
		if err != nil {
			return "", openai.Usage{}, err
		}
		return resp.Choices[0].Message.Content, resp.Usage, nil
	}
	req.Stream, req.StreamOptions = true, &openai.StreamOptions{IncludeUsage: true}
	st, err := cl.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return "", openai.Usage{}, err
	}
	defer st.Close()
	var b strings.Builder
	var u openai.Usage
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), u, nil
		}
		if err != nil {
			return b.String(), u, err
		}
		if ch.Usage != nil {
			u = *ch.Usage
		}
		if len(ch.Choices) > 0 {
			b.WriteString(ch.Choices[0].Delta.Content)
		}
	}
}

// minOwnPrefix is how many tokens beyond the shared prefix a follow-up
// must find cached to count as landing on its program's backend: its
// system message alone is much longer (some 350 tokens with the scripted
// model's tokenizer).
const minOwnPrefix = 32

// systemPrompt is a program's own system message.
func systemPrompt(prog string) string {
	var b strings.Builder
	b.WriteString("You are agent " + prog + ".")
	for i := range 40 {
		fmt.Fprintf(&b, " %s-%d", prog, i)
	}
	return b.String()
}

// leaks reads a backend's /healthz: "" when its engine leaked nothing.
func leaks(base string) string {
	resp, err := http.Get(strings.TrimSuffix(base, "/") + "/healthz")
	if err != nil {
		return "" // a backend that is down (killed) has nothing to check
	}
	defer resp.Body.Close()
	var h struct {
		Status string `json:"status"`
		Engine struct {
			Leaked   int    `json:"leaked"`
			CheckErr string `json:"check_error"`
		} `json:"engine"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return fmt.Sprintf("%s: unreadable /healthz: %v", base, err)
	}
	if h.Engine.Leaked != 0 || h.Engine.CheckErr != "" || h.Status != "ok" {
		return fmt.Sprintf("%s: status %s, %d blocks leaked, check %q", base, h.Status, h.Engine.Leaked, h.Engine.CheckErr)
	}
	return ""
}

type header struct {
	base    http.RoundTripper
	program string
}

func (h header) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Pitstop-Program", h.program)
	return h.base.RoundTrip(r)
}
