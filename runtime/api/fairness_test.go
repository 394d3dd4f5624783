package api

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
)

var fairnessRun = flag.Duration("pitstop.fairness", 0, "run the two-tenant fairness measurement for this long per phase (e.g. 60s) and log its table")

// fairnessSetup is one phase of the two-tenant measurement.
type fairnessSetup struct {
	lightRate, floodRate float64 // calls per second, Poisson
	duration             time.Duration
	noShare              bool // the ablation: no tenant share in the engine
	seed                 uint64
}

// tenantOutcome is what one tenant's clients saw.
type tenantOutcome struct {
	ok, limited, failed int
	latencies           []time.Duration // of the answered calls
}

func (o *tenantOutcome) quantile(q float64) time.Duration {
	if len(o.latencies) == 0 {
		return 0
	}
	s := slices.Clone(o.latencies)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

func (o *tenantOutcome) mean() time.Duration {
	if len(o.latencies) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range o.latencies {
		sum += l
	}
	return sum / time.Duration(len(o.latencies))
}

// runFairness serves two tenants, "light" and "flood" (which may have 16
// calls in flight), on the scripted model paced at the profiled GPU's speed
// with a small KV memory (about a dozen calls fit), and drives each with
// Poisson arrivals of go-openai calls that write ~60 words.
func runFairness(t *testing.T, s fairnessSetup) (light, flood tenantOutcome) {
	t.Helper()
	ts := newTestServer(t, serverOpts{
		rt:  runtime.Config{Pace: 1, KVTokens: 1536, DisableTenantShare: s.noShare},
		api: Config{Keys: keyring(t, "kl tenant=light\nkf tenant=flood max-concurrent=16\n")},
	})
	transport := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}
	defer transport.CloseIdleConnections()
	client := func(key string) *openai.Client {
		cfg := openai.DefaultConfig(key)
		cfg.BaseURL = ts.http.URL + "/v1"
		cfg.HTTPClient = &http.Client{Transport: transport, Timeout: 2 * time.Minute}
		return openai.NewClientWithConfig(cfg)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	drive := func(key string, rate float64, out *tenantOutcome, seed uint64) {
		defer wg.Done()
		c := client(key)
		rng := rand.New(rand.NewPCG(seed, 7))
		end := time.Now().Add(s.duration)
		for next := time.Now(); next.Before(end); next = next.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second))) {
			time.Sleep(time.Until(next))
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
					Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("/long 60")}})
				d := time.Since(start)
				mu.Lock()
				defer mu.Unlock()
				var ae *openai.APIError
				switch {
				case err == nil:
					out.ok++
					out.latencies = append(out.latencies, d)
				case errors.As(err, &ae) && ae.HTTPStatusCode == http.StatusTooManyRequests:
					out.limited++
				default:
					out.failed++
					t.Logf("%s: %v", key, err)
				}
			}()
		}
	}
	wg.Add(1)
	go drive("kl", s.lightRate, &light, s.seed)
	if s.floodRate > 0 {
		wg.Add(1)
		go drive("kf", s.floodRate, &flood, s.seed+1)
	}
	wg.Wait()
	return light, flood
}

// TestTenantFairness: a tenant flooding the server at ten times another's
// rate gets 429s (never timeouts or errors) and the other tenant's calls
// are all answered. Quick by default (a few seconds, no timing asserted);
// -pitstop.fairness=60s runs the measurement of docs/security.md: the light
// tenant alone, then with the flood, then with the flood and no tenant
// share in the engine, and logs mean, p50 and p99 of each:
//
//	go test ./runtime/api -run TestTenantFairness -count=1 -v -pitstop.fairness=60s
func TestTenantFairness(t *testing.T) {
	d, light := 3*time.Second, 2.0
	if *fairnessRun > 0 {
		d = *fairnessRun
	}
	if *fairnessRun == 0 {
		l, f := runFairness(t, fairnessSetup{lightRate: light, floodRate: 10 * light, duration: d, seed: 1})
		if l.failed+f.failed > 0 || l.limited > 0 || l.ok == 0 || f.limited == 0 {
			t.Errorf("light %d ok %d limited %d failed; flood %d ok %d limited %d failed", l.ok, l.limited, l.failed, f.ok, f.limited, f.failed)
		}
		return
	}
	row := func(name string, o tenantOutcome) string {
		return fmt.Sprintf("%-34s %5d ok %5d 429 %3d failed   mean %6.2fs  p50 %6.2fs  p99 %6.2fs", name, o.ok, o.limited, o.failed,
			o.mean().Seconds(), o.quantile(0.5).Seconds(), o.quantile(0.99).Seconds())
	}
	for seed := uint64(1); seed <= 3; seed++ {
		alone, _ := runFairness(t, fairnessSetup{lightRate: light, duration: d, seed: seed})
		withFlood, flood := runFairness(t, fairnessSetup{lightRate: light, floodRate: 10 * light, duration: d, seed: seed})
		noShare, floodNoShare := runFairness(t, fairnessSetup{lightRate: light, floodRate: 10 * light, duration: d, seed: seed, noShare: true})
		t.Logf("seed %d, %v per phase, light %g calls/s, flood %g calls/s (max 16 in flight)\n%s\n%s\n%s\n%s\n%s\nlight p99 with flood / alone: %.2f (no tenant share: %.2f)",
			seed, d, light, 10*light,
			row("light alone", alone), row("light, with flood", withFlood), row("flood", flood),
			row("light, with flood, no share", noShare), row("flood, no share", floodNoShare),
			withFlood.quantile(0.99).Seconds()/alone.quantile(0.99).Seconds(), noShare.quantile(0.99).Seconds()/alone.quantile(0.99).Seconds())
	}
}
