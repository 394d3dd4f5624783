package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// overheadResult is the router's own time per call at a fixed open-loop
// rate: the client's request-to-response time less the time the fake
// backend's handler spent on the call. What remains is the router's work
// (decode, pick, admission, encode, stream parse, re-encode, metrics), two
// loopback round trips, the client's and the fake backend's HTTP work, and
// any wait for a core: Direct runs measure that floor without a router.
type overheadResult struct {
	Rate, Seconds float64
	// StartUnixNano is the wall clock at the load's start: a Slowest
	// call's AtMs from it places the call on an execution trace's clock
	// (the trace's clock snapshots; scripts/tracetail).
	StartUnixNano int64
	// Direct: the calls went straight to the fake backend (no router).
	Direct                 bool
	Calls, Failed          int
	P50Ms, P99Ms, P999Ms   float64
	MeanMs, MaxMs          float64
	ClientP50Ms, ClientP99 float64
	InP50Ms, InP99Ms       float64 // client's send to the backend's handler: the request's way
	OutP50Ms, OutP99Ms     float64 // the handler's end to the client's last byte: the reply's way
	LateP99Ms              float64 // how late the generator sent, against its schedule
	// LateShare is the share of the calls sent 0.5 ms or more late: the
	// base rate for the Slowest's LateMs.
	LateShare        float64
	AchievedRate     float64 // calls completed per second of the load's wall time
	RouterCPUPercent float64 // the router's CPU over the load (-router-pid; -1: not read)
	// RouterFaultsPerCall: the router's minor page faults over the load
	// per call (-1: not read): a heap that gives pages back to the kernel
	// and touches them again pays a fault (a zeroed page) for each.
	RouterFaultsPerCall float64
	// RouterRunQueueMs is the time the router's threads were ready to
	// run but waited for a CPU over the load (the kernel's run queue,
	// /proc/PID/task/*/schedstat; -1: not read): a core taken by another
	// process, which no code in the router shortens.
	RouterRunQueueMs float64
	// LoadRunQueueMs is the same for this process (the client and the
	// fake backend): a call's time counts its wait too.
	LoadRunQueueMs float64
	Errors         []string
	// Slowest: the slowest 1% of the calls by overhead, slowest first:
	// when they were sent tells a tail of bursts (a collection, a
	// periodic pass under a lock) from one spread over the run.
	Slowest []slowCall
	// TailWindows is how many 100 ms windows of the run the Slowest were
	// sent in: a few for a tail of bursts, about as many as the calls for
	// one spread over the run.
	TailWindows int
}

// slowCall is one call of the tail: when it was sent (ms after the load's
// start), its overhead and the part of it on the request's way (the
// client's send to the backend's handler) and the reply's, and how late
// the generator sent it against its schedule (a call sent late was held
// up in this process, and goes out in a bunch with the others held up).
type slowCall struct {
	AtMs, OverMs, InMs, OutMs, LateMs float64
}

// fakeBackend is an OpenAI-compatible server that answers at once (a
// streamed two-word reply) and records when its handler began and ended
// each answer, keyed by the request's last message.
type fakeBackend struct {
	mu      sync.Mutex
	in, out map[string]time.Time
}

const fakeStream = `data: {"model":"fake","choices":[{"index":0,"delta":{"role":"assistant","content":"ok "}}]}` + "\n\n" +
	`data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\ndata: [DONE]\n\n"

func (f *fakeBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	if r.URL.Path == "/v1/models" {
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"fake"}]}`)
		return
	}
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	data, _ := io.ReadAll(r.Body)
	if json.Unmarshal(data, &req) != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, fakeStream)
	id := req.Messages[len(req.Messages)-1].Content
	// The handler's writes sit in the server's buffer until it returns;
	// the flush is on the reply's way, counted as overhead.
	t1 := time.Now()
	f.mu.Lock()
	f.in[id], f.out[id] = t0, t1
	f.mu.Unlock()
}

// serveFake listens on addr with a fake backend.
func serveFake(addr string) (*fakeBackend, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	f := &fakeBackend{in: map[string]time.Time{}, out: map[string]time.Time{}}
	hs := &http.Server{Handler: f}
	go func() { _ = hs.Serve(ln) }()
	return f, func() { hs.Close() }, nil
}

// overhead sends calls to target (the router, or the fake backend itself
// for the floor) at rate per second for seconds, open loop, and measures
// the time per call outside the fake backend's handler. routerPID, when
// positive, is the router's process: its CPU time over the load is read
// from /proc. warmup seconds of the same load come first, not measured: a
// run's first half second (the client's connections opened one by one,
// the router's heap grown from nothing) holds 2.8× its share of the
// slowest calls (docs/results-router.md §4, session 11).
func overhead(target string, f *fakeBackend, rate, seconds, warmup float64, routerPID int) (*overheadResult, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4096
	cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	warm(cl, target, rate, warmup)
	n := int(rate * seconds)
	sent := make([]time.Time, n)
	got := make([]time.Time, n)
	late := make([]float64, n)
	failed := make([]bool, n)
	var errMu sync.Mutex
	var errs []string
	note := func(msg string) {
		errMu.Lock()
		if len(errs) < 5 {
			errs = append(errs, msg)
		}
		errMu.Unlock()
	}
	cpu0, flt0, cpuErr := processCPU(routerPID)
	rq0, rqErr := runQueueWait(routerPID)
	lrq0, lrqErr := runQueueWait(os.Getpid())
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := `{"model":"fake","messages":[{"role":"user","content":"call-` + strconv.Itoa(i) + `"}]}`
			t0 := time.Now()
			late[i] = float64(t0.Sub(at)) / 1e6
			resp, err := cl.Post(target+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err == nil {
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				failed[i] = resp.StatusCode != http.StatusOK
				if failed[i] {
					note(fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, data))
				}
			} else {
				failed[i] = true
				note(err.Error())
			}
			sent[i], got[i] = t0, time.Now()
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	cpu1, flt1, _ := processCPU(routerPID)
	rq1, _ := runQueueWait(routerPID)
	lrq1, _ := runQueueWait(os.Getpid())
	res := &overheadResult{Rate: rate, Seconds: seconds, StartUnixNano: start.UnixNano(), Calls: n, Errors: errs, RouterCPUPercent: -1, RouterFaultsPerCall: -1, RouterRunQueueMs: -1, LoadRunQueueMs: -1}
	if lrqErr == nil {
		res.LoadRunQueueMs = float64(lrq1-lrq0) / 1e6
	}
	if routerPID > 0 && rqErr == nil {
		res.RouterRunQueueMs = float64(rq1-rq0) / 1e6
	}
	if routerPID > 0 && cpuErr == nil {
		res.RouterCPUPercent = 100 * (cpu1 - cpu0).Seconds() / wall.Seconds()
		res.RouterFaultsPerCall = float64(flt1-flt0) / float64(n)
	}
	var over, client, in, out []float64
	var calls []slowCall
	f.mu.Lock()
	for i := range n {
		id := "call-" + strconv.Itoa(i)
		bin, bout := f.in[id], f.out[id]
		if failed[i] || bin.IsZero() {
			res.Failed++
			continue
		}
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		in = append(in, ms(bin.Sub(sent[i])))
		out = append(out, ms(got[i].Sub(bout)))
		over = append(over, ms(got[i].Sub(sent[i])-bout.Sub(bin)))
		client = append(client, ms(got[i].Sub(sent[i])))
		calls = append(calls, slowCall{AtMs: ms(sent[i].Sub(start)), OverMs: over[len(over)-1], InMs: in[len(in)-1], OutMs: out[len(out)-1], LateMs: late[i]})
	}
	f.mu.Unlock()
	slices.SortFunc(calls, func(a, b slowCall) int { return cmp.Compare(b.OverMs, a.OverMs) })
	res.Slowest = calls[:(len(calls)+99)/100]
	windows := map[int]bool{}
	for _, c := range res.Slowest {
		windows[int(c.AtMs/100)] = true
	}
	res.TailWindows = len(windows)
	res.AchievedRate = float64(n-res.Failed) / wall.Seconds()
	if len(over) > 0 {
		for _, x := range over {
			res.MeanMs += x
		}
		res.MeanMs /= float64(len(over))
		res.P50Ms, res.P99Ms, res.P999Ms, res.MaxMs = quantile(over, 0.5), quantile(over, 0.99), quantile(over, 0.999), slices.Max(over)
		res.ClientP50Ms, res.ClientP99 = quantile(client, 0.5), quantile(client, 0.99)
		res.InP50Ms, res.InP99Ms = quantile(in, 0.5), quantile(in, 0.99)
		res.OutP50Ms, res.OutP99Ms = quantile(out, 0.5), quantile(out, 0.99)
		lateCalls := 0
		for _, l := range late {
			if l >= 0.5 {
				lateCalls++
			}
		}
		res.LateShare = float64(lateCalls) / float64(len(late))
		res.LateP99Ms = quantile(late, 0.99)
	}
	return res, nil
}

// warm sends calls to target at rate per second for seconds, open loop,
// and waits for them: their connections stay open in cl for the load.
func warm(cl *http.Client, target string, rate, seconds float64) {
	var wg sync.WaitGroup
	start := time.Now()
	for i := range int(rate * seconds) {
		time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
		wg.Go(func() {
			body := `{"model":"fake","messages":[{"role":"user","content":"warm-` + strconv.Itoa(i) + `"}]}`
			resp, err := cl.Post(target+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// quantile is the q-quantile of xs (nearest rank; xs is sorted in place).
func quantile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	i := int(q*float64(len(xs))+0.999999) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// processCPU is a process's user and system CPU time so far and its
// minor page faults, from /proc/PID/stat (Linux; clock ticks of 10 ms).
func processCPU(pid int) (time.Duration, int64, error) {
	if pid <= 0 {
		return 0, 0, fmt.Errorf("no pid")
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may hold spaces: count fields after its ')'.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	flt, err0 := strconv.ParseInt(f[7], 10, 64)
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: unreadable times", pid)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, flt, nil
}

// runQueueWait is the time a process's threads have waited in the
// kernel's run queue so far (the second field of each thread's
// /proc/PID/task/TID/schedstat, ns; a thread that has exited is no longer
// counted: the Go runtime keeps its threads).
func runQueueWait(pid int) (int64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("no pid")
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited meanwhile
		}
		f := strings.Fields(string(data))
		if len(f) < 2 {
			return 0, fmt.Errorf("%s/%s/schedstat: too few fields", dir, t.Name())
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		sum += ns
	}
	return sum, nil
}

// line is the result on one line: p50, p99, p99.9 and max in ms, the
// achieved rate, the router's CPU % ("-" when not read), the failed
// calls, TailWindows, the router's page faults per call ("-") and its
// threads' run-queue wait over the load in ms ("-"), and this process's.
func (r *overheadResult) line() string {
	cpu := "-"
	if r.RouterCPUPercent >= 0 {
		cpu = strconv.FormatFloat(r.RouterCPUPercent, 'f', 1, 64)
	}
	flt := "-"
	if r.RouterFaultsPerCall >= 0 {
		flt = strconv.FormatFloat(r.RouterFaultsPerCall, 'f', 2, 64)
	}
	rq := "-"
	if r.RouterRunQueueMs >= 0 {
		rq = strconv.FormatFloat(r.RouterRunQueueMs, 'f', 1, 64)
	}
	return fmt.Sprintf("%.3f %.3f %.3f %.2f %.0f %s %d %d %s %s %.1f", r.P50Ms, r.P99Ms, r.P999Ms, r.MaxMs, r.AchievedRate, cpu, r.Failed, r.TailWindows, flt, rq, r.LoadRunQueueMs)
}
