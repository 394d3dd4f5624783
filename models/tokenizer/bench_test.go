package tokenizer

import (
	"strings"
	"sync"
	"testing"
)

var benchText = strings.Repeat("The quick brown fox jumps over the lazy dog; it's 12345 times faster!\n    def f(x): return x*2  # code\n日本語のテキストも少し。\n", 200)

func BenchmarkEncodeTrained(b *testing.B) {
	tok := trainedTokenizer(b)
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		tok.Encode(benchText, true)
	}
}

func BenchmarkPreTokenize(b *testing.B) {
	re, _ := compileRegexp2(PatternLlama3)
	scan, _ := compilePattern(PatternLlama3)
	for _, c := range []struct {
		name string
		m    matcher
	}{{"scanner", scan}, {"regexp2", re}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(benchText)))
			for b.Loop() {
				c.m.find(benchText)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	tok := trainedTokenizer(b)
	ids := tok.Encode(benchText, true)
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		tok.Decode(ids)
	}
}

// Encode is safe for concurrent use (run with -race).
func TestConcurrentEncode(t *testing.T) {
	tok := trainedTokenizer(t)
	want := tok.Encode(benchText, true)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				got := tok.Encode(benchText, true)
				if len(got) != len(want) {
					t.Errorf("concurrent Encode gave %d ids, want %d", len(got), len(want))
				}
			}
		}()
	}
	wg.Wait()
}
