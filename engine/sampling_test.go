package engine

import (
	"context"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// samplingExec records the Sampling of every sampled batch item by call,
// and counts swapped-out blocks.
type samplingExec struct {
	seen    map[SeqID][]Sampling
	swapped int
}

func (x *samplingExec) Step(b *Batch) (time.Duration, error) {
	x.swapped += len(b.SwapOut)
	for i := range b.Items {
		if it := &b.Items[i]; it.Sample {
			x.seen[it.Seq.ID()] = append(x.seen[it.Seq.ID()], it.Sampling)
		}
	}
	return time.Millisecond, nil
}

// pauseOnce pauses at its pauseAt-th token and finishes at its total-th.
type pauseOnce struct{ n, pauseAt, total int }

func (c *pauseOnce) Next(*Sequence, int32) Action {
	c.n++
	switch c.n {
	case c.pauseAt:
		return Action{Token: 1, Kind: Pause, Tool: ToolCall{Name: "t", Expected: 1}}
	case c.total:
		return Action{Token: 1, Kind: Finish}
	}
	return Action{Token: 1}
}

func (c *pauseOnce) Forecast(*Sequence) Forecast { return Forecast{} }

// resumer resumes a paused call with ResumeWith and a new sampling.
type resumer struct {
	e    *Engine
	next Sampling
}

func (r *resumer) Observe(ev *Event) {
	if ev.Kind == EvPaused {
		id := ev.Seq.ID()
		r.e.At(ev.Time+time.Millisecond, func() {
			if err := r.e.ResumeWith(id, []int32{9, 9}, r.next); err != nil {
				r.e.Stop(err)
			}
		})
	}
}

// TestBatchCarriesSampling: every sampled batch item carries its call's
// Request.Sampling, and a call resumed with ResumeWith carries the new one
// from then on, through a swap of its KV.
func TestBatchCarriesSampling(t *testing.T) {
	x := &samplingExec{seen: map[SeqID][]Sampling{}}
	r := &resumer{next: Sampling{Temperature: 0.5, TopP: 0.9, Seed: 2}}
	e, err := New(baseConfig(), NewVirtualClock(), x, testPolicy{kind: handling.Swap}, r)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	first := Sampling{Temperature: 1, Seed: 1}
	s, err := e.SubmitNow(Request{Prompt: prompts(1, 9)[0], Sampling: first, Controller: &pauseOnce{pauseAt: 3, total: 7}})
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := x.seen[id]
	if len(got) != 7 {
		t.Fatalf("%d sampled items, want 7 (3 before the tool, 4 after)", len(got))
	}
	for i, sp := range got {
		want := first
		if i >= 3 {
			want = r.next
		}
		if sp != want {
			t.Errorf("sampled item %d carries %+v, want %+v", i, sp, want)
		}
	}
	if x.swapped == 0 {
		t.Error("the call's KV was not swapped while it paused")
	}
}
