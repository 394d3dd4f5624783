package cluster

import (
	"fmt"
	"testing"
)

// BenchmarkPick64 is one decision with 64 replicas (the issue asks < 10 µs).
func BenchmarkPick64(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			s := replicas(64)
			for i := range s.Replicas {
				r := &s.Replicas[i]
				r.RunningCalls, r.WaitingCalls = 10+i%7, i%3
				r.RunningContext, r.RunningTokens, r.WaitingPrefill = 20000+i*100, 3000, 500*(i%3)
				r.CachedPrefix = (i * 37) % 2000
				for p := range 50 {
					r.Hold(fmt.Sprintf("p%d", i*50+p), 1000, 0)
				}
			}
			bal, _ := New(name, Options{})
			c := &Call{Program: "p7", PromptTokens: 3000, PredictedDecode: 100}
			b.ReportAllocs()
			for b.Loop() {
				bal.Pick(c, s)
			}
		})
	}
}
