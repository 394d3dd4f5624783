package remote

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

func newIdleRouter(t testing.TB, ttl time.Duration) *Router {
	t.Helper()
	specs, err := ParseSpecs([]string{"http://a:1"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Transport: testutil.CannedTransport{}, HealthInterval: time.Hour, ProgramTTL: ttl, Logger: slog.New(slog.DiscardHandler)}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// useProgram records a generation of program as Generate does.
func (r *Router) useProgram(program string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attained[program] += 10
	r.usedLocked(program, now)
}

// No hold of the router's lock looks at more than expireBatch programs,
// however many are due or remembered (counted, not timed); a program used
// again since stays; a program forgotten and used again is filed once.
func TestExpireStepBounded(t *testing.T) {
	const live, due = 50_000, 5_000
	r := newIdleRouter(t, time.Minute)
	t0 := time.Now()
	for i := range live + due {
		r.useProgram("p"+strconv.Itoa(i), t0)
	}
	for i := range live {
		r.useProgram("p"+strconv.Itoa(i), t0.Add(time.Minute)) // used again
	}
	r.ProgramDone("p0")
	r.useProgram("p0", t0.Add(time.Minute))
	now := t0.Add(time.Minute + time.Second)
	forgot, steps := 0, 0
	for more := true; more; steps++ {
		f, touched, m := r.expireStep(now)
		if touched > expireBatch {
			t.Fatalf("one hold looked at %d programs, want at most %d", touched, expireBatch)
		}
		forgot += f
		more = m
	}
	if forgot != due || len(r.used) != live || r.due.Len() != live || len(r.attained) != live {
		t.Errorf("forgot %d, %d used, %d filed, %d ranked; want %d, %d, %d, %d", forgot, len(r.used), r.due.Len(), len(r.attained), due, live, live, live)
	}
	// The programs used again were filed at their new due time: a hold
	// now looks at none.
	if _, touched, more := r.expireStep(now); touched != 0 || more {
		t.Errorf("a hold with nothing due looked at %d programs (more %v)", touched, more)
	}
	if got := r.expirePrograms(t0.Add(2*time.Minute + time.Nanosecond)); got != live || r.due.Len() != 0 {
		t.Errorf("forgot %d programs at their TTL, %d filed; want %d, 0", got, r.due.Len(), live)
	}
}

// The health loop forgets an idle program within a small part of its TTL
// after the TTL: it scanned every program every ProgramTTL/8 or health
// interval, whichever was longer (never, here).
func TestProgramForgottenOnTime(t *testing.T) {
	const ttl = time.Second
	r := newIdleRouter(t, ttl)
	if _, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return false }); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	for r.Rank("p") != 0 {
		if time.Since(ended) > ttl+ttl/2 {
			t.Fatalf("the program is still ranked %v after its call", time.Since(ended))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(ended); d < ttl {
		t.Errorf("the program was forgotten %v after its call, before its TTL", d)
	}
}
