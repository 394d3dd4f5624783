package cluster

import (
	"fmt"
	"strings"
	"testing"
)

var speed8b = Speed{BaseS: 0.013, PrefillTokenS: 0.000084, DecodeSeqS: 0.00002, DecodeCtxS: 0.000000065}

func replicas(n int) *State {
	s := &State{Replicas: make([]Replica, n)}
	for i := range s.Replicas {
		s.Replicas[i] = Replica{Name: fmt.Sprint(i), Weight: 1, FreeBlocks: 10000, TotalBlocks: 10000, BlockSize: 16, MaxSeqs: 256, Speed: speed8b}
	}
	return s
}

func TestNewUnknownNamesTheValidOnes(t *testing.T) {
	_, err := New("nope", Options{})
	if err == nil || !strings.Contains(err.Error(), "round-robin") || !strings.Contains(err.Error(), "pitstop") {
		t.Fatalf("error %v should name the valid balancers", err)
	}
	for _, n := range Names() {
		b, err := New(n, Options{})
		if err != nil || b.Name() != n {
			t.Fatalf("New(%q) = %v, %v", n, b, err)
		}
	}
}

func TestRoundRobinCycles(t *testing.T) {
	s := replicas(3)
	b := &RoundRobin{}
	var got []int
	for range 7 {
		got = append(got, b.Pick(&Call{}, s))
	}
	if fmt.Sprint(got) != "[0 1 2 0 1 2 0]" {
		t.Fatalf("round-robin picked %v", got)
	}
}

func TestLeastUsedAndLeastTokens(t *testing.T) {
	s := replicas(3)
	s.Replicas[0].RunningCalls, s.Replicas[0].RunningTokens = 1, 5000
	s.Replicas[1].RunningCalls, s.Replicas[1].WaitingCalls, s.Replicas[1].RunningTokens = 2, 1, 100
	s.Replicas[2].RunningCalls, s.Replicas[2].RunningTokens = 2, 3000
	if got := (LeastUsed{}).Pick(&Call{}, s); got != 0 {
		t.Fatalf("least-used picked %d, want 0 (1 call)", got)
	}
	if got := (LeastTokens{}).Pick(&Call{}, s); got != 1 {
		t.Fatalf("least-tokens picked %d, want 1 (100 tokens)", got)
	}
	s.Replicas[2].Weight = 40 // 3000/40 = 75 tokens per unit of speed
	if got := (LeastTokens{}).Pick(&Call{}, s); got != 2 {
		t.Fatalf("least-tokens picked %d, want the fast replica 2", got)
	}
}

func TestPrefixFollowsCacheUntilImbalanced(t *testing.T) {
	s := replicas(3)
	b, _ := New("prefix", Options{})
	s.Replicas[2].CachedPrefix = 900
	s.Replicas[2].RunningCalls = 10
	c := &Call{PromptTokens: 1000}
	if got := b.Pick(c, s); got != 2 {
		t.Fatalf("prefix picked %d, want 2 (holds 90%% of the prompt)", got)
	}
	s.Replicas[2].CachedPrefix = 400 // below the 0.5 cache threshold
	if got := b.Pick(c, s); got != 0 {
		t.Fatalf("prefix picked %d, want the least loaded 0", got)
	}
	s.Replicas[2].CachedPrefix = 900
	s.Replicas[2].RunningCalls = 40 // 40 - 0 > 32: out of balance
	if got := b.Pick(c, s); got != 0 {
		t.Fatalf("prefix picked %d, want the least loaded 0 when imbalanced", got)
	}
}

func TestAutellixAlgorithm2(t *testing.T) {
	s := replicas(3)
	b := NewAutellix(2048)
	s.Replicas[0].RunningCalls = 5
	s.Replicas[1].RunningCalls = 1
	s.Replicas[2].RunningCalls = 3
	short := &Call{Program: "p", PromptTokens: 2048}
	if got := b.Pick(short, s); got != 1 {
		t.Fatalf("short call went to %d, want least used 1", got)
	}
	long := &Call{Program: "p", PromptTokens: 2049}
	if got := b.Pick(long, s); got != 1 {
		t.Fatalf("first long call went to %d, want least used 1", got)
	}
	s.Replicas[1].RunningCalls = 50 // pinned: the program stays despite load
	if got := b.Pick(long, s); got != 1 {
		t.Fatalf("pinned long call went to %d, want 1", got)
	}
	if got := b.Pick(short, s); got != 2 {
		t.Fatalf("short call went to %d, want least used 2", got)
	}
	b.ProgramDone("p")
	if got := b.Pick(long, s); got != 2 {
		t.Fatalf("after the program ended its long call went to %d, want 2", got)
	}
}

func TestPitstopWeighsMissAgainstQueueing(t *testing.T) {
	s := replicas(2)
	b := NewPitstop()
	// Replica 0 holds 7,000 of an 8,000-token prompt and is a little busier.
	s.Replicas[0].CachedPrefix = 7000
	s.Replicas[0].RunningCalls, s.Replicas[0].RunningContext, s.Replicas[0].RunningTokens = 20, 20000, 2000
	s.Replicas[1].RunningCalls, s.Replicas[1].RunningContext, s.Replicas[1].RunningTokens = 10, 10000, 1000
	c := &Call{Program: "p", PromptTokens: 8000, PredictedDecode: 100}
	if got := b.Pick(c, s); got != 0 {
		t.Fatalf("pitstop picked %d, want 0: recomputing 7,000 tokens beside 10 calls costs more than a slightly bigger batch", got)
	}
	// Replica 0 has no memory left: the call would wait for a running call.
	s.Replicas[0].FreeBlocks = 10
	s.Replicas[0].WaitingCalls = 200
	if got := b.Pick(c, s); got != 1 {
		t.Fatalf("pitstop picked %d, want 1 once replica 0 is the bottleneck", got)
	}
	// A short call that hits nowhere goes where the batch is smaller.
	if got := b.Pick(&Call{PromptTokens: 200, PredictedDecode: 50}, replicasWithBatches(30, 5)); got != 1 {
		t.Fatalf("pitstop picked %d for a short call, want the lighter replica 1", got)
	}
}

func TestPitstopPrefersTheFasterReplica(t *testing.T) {
	s := replicas(2)
	s.Replicas[0].Speed = Speed{BaseS: 0.04, PrefillTokenS: 0.0004, DecodeSeqS: 0.00004, DecodeCtxS: 0.00000016}
	if got := NewPitstop().Pick(&Call{PromptTokens: 500, PredictedDecode: 200}, s); got != 1 {
		t.Fatalf("pitstop picked %d, want the faster idle replica 1", got)
	}
}

func replicasWithBatches(a, b int) *State {
	s := replicas(2)
	s.Replicas[0].RunningCalls, s.Replicas[0].RunningContext, s.Replicas[0].RunningTokens = a, a*1000, a*100
	s.Replicas[1].RunningCalls, s.Replicas[1].RunningContext, s.Replicas[1].RunningTokens = b, b*1000, b*100
	return s
}

func TestStateHoldsPrograms(t *testing.T) {
	s := replicas(2)
	s.Replicas[0].Hold("p", 100, 5)
	s.Replicas[0].Hold("p", 300, 9)
	h, ok := s.Replicas[0].Holds("p")
	if !ok || h.Tokens != 300 || h.Since != 5 || h.LastUsed != 9 {
		t.Fatalf("held %+v %v", h, ok)
	}
	s.ProgramDone("p")
	if _, ok := s.Replicas[0].Holds("p"); ok || s.Replicas[0].Programs() != 0 {
		t.Fatal("program not forgotten")
	}
}
