package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// overheadResult is the router's own time per call: the client's
// request-to-response time less the time the backend spent on it, at a
// fixed open-loop rate.
type overheadResult struct {
	Rate, Seconds          float64
	Calls, Failed          int
	P50Ms, P99Ms, MeanMs   float64
	ClientP50Ms, ClientP99 float64
	// Errors are the first failures, as the client saw them.
	Errors []string
}

// fakeBackend is an OpenAI-compatible server that answers at once (a
// streamed two-word reply) and records how long each answer took it,
// keyed by the request's last message.
type fakeBackend struct {
	mu   sync.Mutex
	took map[string]time.Duration
}

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
	_, _ = io.WriteString(w, `data: {"model":"fake","choices":[{"index":0,"delta":{"role":"assistant","content":"ok "}}]}`+"\n\n"+
		`data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`+"\n\n"+
		`data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}`+"\n\ndata: [DONE]\n\n")
	id := req.Messages[len(req.Messages)-1].Content
	f.mu.Lock()
	f.took[id] = time.Since(t0)
	f.mu.Unlock()
}

// serveFake listens on addr with a fake backend.
func serveFake(addr string) (*fakeBackend, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	f := &fakeBackend{took: map[string]time.Duration{}}
	hs := &http.Server{Handler: f}
	go func() { _ = hs.Serve(ln) }()
	return f, func() { hs.Close() }, nil
}

// overhead sends calls to the router at rate per second for seconds,
// open loop, and measures its overhead per call.
func overhead(router string, f *fakeBackend, rate, seconds float64) (*overheadResult, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4096
	cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	n := int(rate * seconds)
	client := make([]time.Duration, n)
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
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "call-" + strconv.Itoa(i)
			body := fmt.Sprintf(`{"model":"fake","messages":[{"role":"user","content":%q}]}`, id)
			t0 := time.Now()
			resp, err := cl.Post(router+"/v1/chat/completions", "application/json", bytes.NewReader([]byte(body)))
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
			client[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	res := &overheadResult{Rate: rate, Seconds: seconds, Calls: n, Errors: errs}
	var over, cl2 []float64
	f.mu.Lock()
	for i := range n {
		if failed[i] {
			res.Failed++
			continue
		}
		took := f.took["call-"+strconv.Itoa(i)]
		over = append(over, float64(client[i]-took)/1e6)
		cl2 = append(cl2, float64(client[i])/1e6)
	}
	f.mu.Unlock()
	slices.Sort(over)
	slices.Sort(cl2)
	if len(over) > 0 {
		for _, x := range over {
			res.MeanMs += x
		}
		res.MeanMs /= float64(len(over))
		res.P50Ms, res.P99Ms = over[(len(over)-1)/2], over[(99*len(over)+99)/100-1]
		res.ClientP50Ms, res.ClientP99 = cl2[(len(cl2)-1)/2], cl2[(99*len(cl2)+99)/100-1]
	}
	return res, nil
}
