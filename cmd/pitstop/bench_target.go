package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
)

// targetFlags make bench replay its workload against a live
// OpenAI-compatible endpoint (bench --target) as real clients: one
// goroutine per program, its calls in order after their parents and think
// times, each segment a streamed chat completion of the segment's output
// length, each tool a pause of the tool's time on the client followed by
// its result appended to the conversation.
type targetFlags struct {
	url, model, label, apiKeyEnv string
	timeout                      time.Duration
	maxPrograms                  int
}

func addTargetFlags(fl *pflag.FlagSet, f *targetFlags) {
	fl.StringVar(&f.url, "target", "", "replay the workload against this OpenAI-compatible endpoint (http://host:port[/v1]) as real clients, instead of the simulator: pitstop serve, a pitstop router, vLLM, SGLang, llama.cpp")
	fl.StringVar(&f.model, "target-model", "", "with --target: the model to ask for (default: the endpoint's first in /v1/models)")
	fl.StringVar(&f.label, "target-label", "target", "with --target: the run's name in the report (its policy column), e.g. router-pitstop or vllm-alone")
	fl.StringVar(&f.apiKeyEnv, "target-api-key-env", "", "with --target: environment variable holding the endpoint's API key")
	fl.DurationVar(&f.timeout, "target-timeout", 5*time.Minute, "with --target: longest one call may take")
	fl.IntVar(&f.maxPrograms, "target-programs", 0, "with --target: replay at most this many programs per rate (0: every arrival in --duration)")
}

// targetCheck validates --target and the flags that go with it.
func (f *targetFlags) check(changed func(string) bool) error {
	if f.url == "" {
		for _, n := range []string{"target-model", "target-label", "target-api-key-env", "target-timeout", "target-programs"} {
			if changed(n) {
				return usagef("--%s needs --target", n)
			}
		}
		return nil
	}
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--target: malformed URL %q (want http://host:port, optionally ending in /v1)", f.url)
	}
	if f.timeout <= 0 || f.maxPrograms < 0 {
		return usagef("--target-timeout must be positive and --target-programs not negative")
	}
	if f.apiKeyEnv != "" && os.Getenv(f.apiKeyEnv) == "" {
		return usagef("--target-api-key-env: $%s is empty or not set", f.apiKeyEnv)
	}
	return nil
}

// baseURL is the endpoint's /v1 URL.
func (f *targetFlags) baseURL() string {
	u := strings.TrimSuffix(strings.TrimSuffix(f.url, "/"), "/v1")
	return u + "/v1"
}

// runBenchTarget replays the workload once per rate against the target.
func runBenchTarget(ctx context.Context, f benchFlags, w *workload.Workload) error {
	t := f.target
	cfg := openai.DefaultConfig(os.Getenv(t.apiKeyEnv))
	cfg.BaseURL = t.baseURL()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4096
	cfg.HTTPClient = &http.Client{Transport: programHeader{tr}}
	cl := openai.NewClientWithConfig(cfg)
	if ctx == nil {
		ctx = context.Background()
	}
	model := t.model
	if model == "" {
		ms, err := cl.ListModels(ctx)
		if err != nil || len(ms.Models) == 0 {
			return fmt.Errorf("--target %s: listing its models: %v (give --target-model)", t.url, err)
		}
		model = ms.Models[0].ID
	}
	st := workload.Stats(w)
	fmt.Printf("workload %s: %d programs, %d calls, %d tool calls; target %s, model %s\n", w.Name, st.Programs, st.Calls, st.ToolCalls, cfg.BaseURL, model)
	rep := &report.Report{Workload: w.Name, Executor: "target", Profile: cfg.BaseURL}
	for _, rate := range f.rates {
		rp := &targetReplay{cl: cl, model: model, w: w, rate: rate, f: f, col: report.NewCollector()}
		run, err := rp.run(ctx)
		if err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, run)
		mean, p99 := rp.programLatency()
		fmt.Printf("%s rate %g: %d programs, program latency mean %.3fs p99 %.3fs, %d calls failed\n",
			t.label, rate, len(rp.progLat), mean, p99, rp.failed.Load())
	}
	report.WriteTable(os.Stdout, rep)
	if f.jsonPath != "" {
		if err := report.WriteJSON(f.jsonPath, rep); err != nil {
			return err
		}
	}
	if f.csvPath != "" {
		return report.WriteCSV(f.csvPath, rep)
	}
	return nil
}

// programHeader moves the program id from the request's context to the
// X-Pitstop-Program header (go-openai builds the request).
type programHeader struct{ base http.RoundTripper }

type programKeyT struct{}

func (p programHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	if id, ok := r.Context().Value(programKeyT{}).(string); ok {
		r = r.Clone(r.Context())
		r.Header.Set("X-Pitstop-Program", id)
	}
	return p.base.RoundTrip(r)
}

type targetReplay struct {
	cl     *openai.Client
	model  string
	w      *workload.Workload
	rate   float64
	f      benchFlags
	col    *report.Collector
	start  time.Time
	failed atomic.Int64

	mu      sync.Mutex
	progLat []float64
}

func (rp *targetReplay) now() float64 { return time.Since(rp.start).Seconds() }

// arrivals are the programs to replay and when (seconds from the start):
// the workload's own times when it has them, else Poisson arrivals at the
// rate, programs drawn with replacement.
func (rp *targetReplay) arrivals() []struct {
	at float64
	p  *workload.Program
} {
	var out []struct {
		at float64
		p  *workload.Program
	}
	rng := rand.New(rand.NewPCG(uint64(rp.f.seed), 0x5eed))
	limit := rp.f.target.maxPrograms
	if rp.w.Timestamped {
		for i := range rp.w.Programs {
			p := &rp.w.Programs[i]
			if p.Arrival <= rp.f.duration {
				out = append(out, struct {
					at float64
					p  *workload.Program
				}{p.Arrival, p})
			}
		}
	} else {
		for t := rng.ExpFloat64() / rp.rate; t < rp.f.duration; t += rng.ExpFloat64() / rp.rate {
			out = append(out, struct {
				at float64
				p  *workload.Program
			}{t, &rp.w.Programs[rng.IntN(len(rp.w.Programs))]})
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func (rp *targetReplay) run(ctx context.Context) (report.Run, error) {
	arr := rp.arrivals()
	rp.start = time.Now()
	var wg sync.WaitGroup
	for i, a := range arr {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d := time.Until(rp.start.Add(time.Duration(a.at * float64(time.Second)))); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return
				}
			}
			rp.program(ctx, fmt.Sprintf("r%g-p%d-%s", rp.rate, i, a.p.ID), a.p)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return report.Run{}, err
	}
	run := rp.col.Summarize(rp.f.target.label, rp.rate)
	run.Seed, run.DurationS = rp.f.seed, rp.f.duration
	return run, nil
}

// program replays one program: calls after their parents (a call that
// continues its first parent starts from that parent's conversation).
func (rp *targetReplay) program(ctx context.Context, id string, p *workload.Program) {
	ctx = context.WithValue(ctx, programKeyT{}, id)
	arrived := rp.now()
	rp.col.ProgramArrived(id, arrived)
	done := make(map[string]chan struct{}, len(p.Calls))
	final := make(map[string][]openai.ChatCompletionMessage, len(p.Calls))
	for _, c := range p.Calls {
		done[c.ID] = make(chan struct{})
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	tokens := atomic.Int64{}
	for i := range p.Calls {
		c := &p.Calls[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[c.ID])
			for _, parent := range c.Parents {
				if ch, ok := done[parent]; ok {
					<-ch
				}
			}
			sleepCtx(ctx, c.ThinkTime)
			var msgs []openai.ChatCompletionMessage
			if c.ContinueParent && len(c.Parents) > 0 {
				mu.Lock()
				msgs = slices.Clone(final[c.Parents[0]])
				mu.Unlock()
			}
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: filler(c.PromptFromPrefix()+c.NewTokens, id+"/"+c.ID)})
			msgs, n := rp.call(ctx, id+"/"+c.ID, c, msgs)
			tokens.Add(int64(n))
			mu.Lock()
			final[c.ID] = msgs
			mu.Unlock()
		}()
	}
	wg.Wait()
	end := rp.now()
	rp.col.ProgramFinished(id, end, end-arrived, int(tokens.Load()))
	rp.mu.Lock()
	rp.progLat = append(rp.progLat, end-arrived)
	rp.mu.Unlock()
}

// call replays one workload call: a streamed completion per segment, the
// client's tool pause between them. It returns the conversation at its
// end and the tokens generated.
func (rp *targetReplay) call(ctx context.Context, name string, c *workload.Call, msgs []openai.ChatCompletionMessage) ([]openai.ChatCompletionMessage, int) {
	rp.col.CallArrived(name, programOf(name), rp.now())
	generated := 0
	for si, seg := range c.Segments {
		if si > 0 {
			rp.col.CallResumed(name, rp.now())
		}
		// "/long N" asks pitstop's scripted test model for N words; a
		// real model reads it as text and is held to max_tokens.
		msgs[len(msgs)-1].Content = "/long " + strconv.Itoa(max(seg.Decode, 1)) + "\n" + msgs[len(msgs)-1].Content
		text, n, err := rp.segment(ctx, name, msgs, max(seg.Decode, 1))
		if err != nil {
			rp.failed.Add(1)
			if ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "call %s: %v\n", name, err)
			}
			return msgs, generated
		}
		generated += n
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text})
		if si == len(c.Segments)-1 {
			break
		}
		rp.col.CallPaused(name, rp.now())
		sleepCtx(ctx, seg.ToolTime)
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: filler(seg.ToolReturn, name+"/tool"+strconv.Itoa(si))})
	}
	rp.col.CallFinished(name, rp.now(), generated)
	return msgs, generated
}

// segment streams one completion and reports its tokens to the collector.
func (rp *targetReplay) segment(ctx context.Context, name string, msgs []openai.ChatCompletionMessage, maxTokens int) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, rp.f.target.timeout)
	defer cancel()
	st, err := rp.cl.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: rp.model, Messages: msgs, MaxTokens: maxTokens, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true}})
	if err != nil {
		return "", 0, err
	}
	defer st.Close()
	var b strings.Builder
	chunks, usage := 0, 0
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return b.String(), chunks, err
		}
		if ch.Usage != nil {
			usage = ch.Usage.CompletionTokens
		}
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			b.WriteString(ch.Choices[0].Delta.Content)
			rp.col.TokenGenerated(name, rp.now())
			chunks++
		}
	}
	// A chunk may carry several tokens: the rest are booked at the end.
	for range usage - chunks {
		rp.col.TokenGenerated(name, rp.now())
	}
	return b.String(), max(usage, chunks), nil
}

func (rp *targetReplay) programLatency() (mean, p99 float64) {
	rp.mu.Lock()
	xs := slices.Clone(rp.progLat)
	rp.mu.Unlock()
	if len(xs) == 0 {
		return 0, 0
	}
	slices.Sort(xs)
	for _, x := range xs {
		mean += x
	}
	rank := (99*len(xs) + 99) / 100
	return mean / float64(len(xs)), xs[max(rank-1, 0)]
}

func programOf(call string) string {
	i := strings.LastIndexByte(call, '/')
	return call[:i]
}

func sleepCtx(ctx context.Context, s float64) {
	if s <= 0 {
		return
	}
	select {
	case <-time.After(time.Duration(s * float64(time.Second))):
	case <-ctx.Done():
	}
}

// filler is n words of text unique to key (about a token each), so that
// prompts are as long as the workload's and share no accidental prefix.
func filler(n int, key string) string {
	var b strings.Builder
	b.WriteString(key)
	for i := range n {
		b.WriteString(" w")
		b.WriteString(strconv.Itoa(i % 97))
	}
	return b.String()
}
