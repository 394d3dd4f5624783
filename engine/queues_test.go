package engine

import "testing"

// queuedPolicy puts calls with an odd id in queue 1 and the rest in 0.
type queuedPolicy struct{ testPolicy }

func (queuedPolicy) Queue(s *Sequence) int { return int(s.ID() % 2) }

func TestQueueLengthsByPolicyQueue(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Policy
		want map[int]int
	}{
		{"policy with queues", queuedPolicy{}, map[int]int{0: 2, 1: 3}},
		{"policy without queues", testPolicy{}, map[int]int{0: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(baseConfig(), NewVirtualClock(), &fixedExec{}, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range prompts(5, 8) {
				if _, err := e.SubmitNow(Request{Prompt: pr, Controller: &script{decode: []int{2}}}); err != nil {
					t.Fatal(err)
				}
			}
			got := e.QueueLengths()
			if len(got) != len(tc.want) || got[0] != tc.want[0] || got[1] != tc.want[1] {
				t.Fatalf("queue lengths %v, want %v", got, tc.want)
			}
		})
	}
}
