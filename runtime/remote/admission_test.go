package remote

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestAdmissionOrdersByRank(t *testing.T) {
	a := newAdmission(1)
	ctx := context.Background()
	if err := a.acquire(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []float64
	var wg sync.WaitGroup
	for _, r := range []float64{50, 10, 30, 10, 20} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.acquire(ctx, r); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, r)
			mu.Unlock()
			a.release()
		}()
	}
	for a.queued() < 5 {
		time.Sleep(time.Millisecond)
	}
	a.release()
	wg.Wait()
	want := []float64{10, 10, 20, 30, 50}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("admitted in order %v, want %v", order, want)
		}
	}
	if a.running() != 0 {
		t.Errorf("%d still in flight", a.running())
	}
}

func TestAdmissionEvictAndCancel(t *testing.T) {
	a := newAdmission(1)
	_ = a.acquire(context.Background(), 0)
	errs := make(chan error, 2)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errs <- a.acquire(ctx, 1) }()
	go func() { errs <- a.acquire(context.Background(), 2) }()
	for a.queued() < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	a.evict()
	if err := <-errs; !errors.Is(err, errBackendGone) {
		t.Fatalf("evicted waiter: %v", err)
	}
	a.release()
	if a.running() != 0 || a.queued() != 0 {
		t.Errorf("running %d queued %d", a.running(), a.queued())
	}
}

func TestAdmissionAdapts(t *testing.T) {
	a := newAdmission(0)
	if a.currentLimit() != initialLimit {
		t.Fatalf("initial limit %d", a.currentLimit())
	}
	for range window {
		a.observe(10 * time.Millisecond)
	}
	for range window {
		a.observe(100 * time.Millisecond) // the backend queues inside
	}
	if got := a.currentLimit(); got >= initialLimit {
		t.Errorf("limit %d after slow calls, want below %d", got, initialLimit)
	}
	fixed := newAdmission(3)
	for range 3 * window {
		fixed.observe(time.Second)
	}
	if fixed.currentLimit() != 3 {
		t.Errorf("a given limit moved to %d", fixed.currentLimit())
	}
}
