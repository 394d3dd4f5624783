package runtime

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// Rows expire on their own TTL (a named program's, a call's without a
// program id), over more than one hold of the lock; rows in use, and rows
// seen again since, stay until a TTL after.
func TestProgramTableExpire(t *testing.T) {
	const ttl, anonTTL = time.Hour, time.Minute
	tab := newProgramTable(ttl, anonTTL)
	t0 := time.Now()
	anon := func(i int) string { return anonPrefix + strconv.Itoa(i) }
	const n = 2*expireBatch + 10
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		tab.arrive(anon(i), anon(i), "", "", true, at)
		tab.finish(anon(i), &Result{}, at)
	}
	tab.arrive("named", "named", "", "", false, t0)
	tab.finish("named", &Result{}, t0)
	tab.arrive("again", "again", "", "", false, t0)
	tab.finish("again", &Result{}, t0)
	tab.arrive("again", "again", "", "", false, t0.Add(time.Minute)) // seen again
	tab.finish("again", &Result{}, t0.Add(time.Minute))
	tab.arrive("busy", "busy", "", "", false, t0)              // in use: never finishes
	tab.invokeStart(anon(3), anon(3), "", t0.Add(time.Second)) // in use

	// All anonymous rows but the last 5 ended over anonTTL before now.
	now := t0.Add(anonTTL + time.Duration(n-5)*time.Millisecond)
	if got := tab.expire(now); got != n-5-1 {
		t.Errorf("expired %d rows, want %d", got, n-5-1)
	}
	for i := range n {
		_, ok := tab.get(anon(i))
		if want := i == 3 || i >= n-5; ok != want {
			t.Errorf("anonymous row %d kept %v, want %v", i, ok, want)
		}
	}
	tab.invokeEnd(anon(3), time.Second, t0.Add(2*time.Second))
	// A named program goes as soon as its TTL is past, not a scan later.
	if got := tab.expire(t0.Add(ttl + time.Nanosecond)); got != 6+1 {
		t.Errorf("expired %d rows at the named TTL, want 7 (5 anonymous, the one invoked, named)", got)
	}
	for id, want := range map[string]bool{"named": false, "again": true, "busy": true} {
		if _, ok := tab.get(id); ok != want {
			t.Errorf("%s kept %v at its TTL, want %v", id, ok, want)
		}
	}
	if got := tab.expire(t0.Add(time.Minute + ttl + time.Nanosecond)); got != 1 {
		t.Errorf("expired %d rows, want 1 (the program seen again)", got)
	}
	if _, ok := tab.get("busy"); !ok {
		t.Error("a program with a call in flight expired")
	}
	tab.finish("busy", &Result{}, t0.Add(3*ttl))
	if got := tab.expire(t0.Add(4*ttl + time.Nanosecond)); got != 1 || tab.len() != 0 || tab.due.Len() != 0 {
		t.Errorf("expired %d rows, %d left, %d filed; want 1, 0, 0", got, tab.len(), tab.due.Len())
	}
}

// No hold of the table's lock looks at more than expireBatch rows,
// however many rows are due or live: the rows are counted, not timed.
func TestProgramTableExpireStepBounded(t *testing.T) {
	const live, due = 50_000, 5_000
	tab := newProgramTable(time.Hour, time.Minute)
	t0 := time.Now()
	for i := range live {
		key := "p" + strconv.Itoa(i)
		tab.arrive(key, key, "", "", false, t0)
		tab.finish(key, &Result{}, t0)
	}
	for i := range due {
		key := anonPrefix + strconv.Itoa(i)
		tab.arrive(key, key, "", "", true, t0)
		tab.finish(key, &Result{}, t0)
	}
	now := t0.Add(2 * time.Minute)
	dropped, steps := 0, 0
	for more := true; more; steps++ {
		d, touched, m := tab.expireStep(now)
		if touched > expireBatch {
			t.Fatalf("one hold looked at %d rows, want at most %d", touched, expireBatch)
		}
		dropped += d
		more = m
	}
	if dropped != due || tab.len() != live {
		t.Errorf("dropped %d rows, %d left; want %d, %d", dropped, tab.len(), due, live)
	}
	if want := due/expireBatch + 1; steps != want {
		t.Errorf("%d holds, want %d", steps, want)
	}
	// None due: a hold looks at nothing.
	if _, touched, more := tab.expireStep(now); touched != 0 || more {
		t.Errorf("a hold with nothing due looked at %d rows (more %v)", touched, more)
	}
}

// The janitor drops a named program, from the runtime's table and the
// engine's, within a small part of its TTL after the TTL. It ticked every
// ProgramTTL/4, at least a second, and scanned the whole table once a
// minute at most (the engine's at that pace after both became heaps): five
// programs ended a fifth of a tick apart, the last of them went up to a
// tick late.
func TestNamedProgramExpiresOnTime(t *testing.T) {
	const ttl, programs, apart = time.Second, 5, 200 * time.Millisecond
	rt := newTestRuntime(t, Config{ProgramTTL: ttl, AnonymousProgramTTL: time.Hour})
	ctx := context.Background()
	ended := make([]time.Time, programs)
	for i := range programs {
		if i > 0 {
			time.Sleep(apart)
		}
		if _, err := rt.ChatSync(ctx, ChatRequest{Program: "p" + strconv.Itoa(i), Messages: []chat.Message{{Role: "user", Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		ended[i] = time.Now()
	}
	for i := range programs {
		key := programKey("", "p"+strconv.Itoa(i))
		inEngine := func() bool {
			in := false
			_ = rt.onEngine(ctx, func() { in = rt.eng.Programs().Get(key) != nil })
			return in
		}
		for table, in := range map[string]func() bool{
			"runtime's": func() bool { _, ok := rt.programs.get(key); return ok },
			"engine's":  inEngine,
		} {
			for {
				ok := in()
				d := time.Since(ended[i])
				if !ok {
					if d < ttl {
						t.Errorf("program %d left the %s table %v after its call, before its TTL", i, table, d)
					}
					break
				}
				if d > ttl+ttl/2 {
					t.Fatalf("program %d is still in the %s table %v after its call", i, table, d)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
}
