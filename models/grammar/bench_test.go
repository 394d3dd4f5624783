package grammar

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// syntheticVocab is a byte-level vocabulary of n tokens for benchmarks at
// the sizes of Llama (32k) and Qwen2 (152k), whose tokenizers are not in
// the repository: the 256 bytes, then pieces drawn like a BPE's — words of
// 2 to 12 letters (half with a leading space, some capitalised), digit
// runs, and runs of JSON punctuation and spaces (`", "`, `":`, `}}`, ...)
// — and an end token (id n-1).
func syntheticVocab(n int) *Vocab {
	rng := rand.New(rand.NewPCG(7, 7))
	seen := map[string]bool{}
	toks := make([][]byte, 0, n)
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
		seen[string([]byte{byte(b)})] = true
	}
	const letters = "eeeeeeeeetttttaaaaoooiiinnnsssshhhrrrdddllcuumwfgypbvkjxqz"
	const punct = `{}[]":, .\n_-'`
	for len(toks) < n-1 {
		var s []byte
		switch r := rng.IntN(20); {
		case r < 16:
			if rng.IntN(2) == 0 {
				s = append(s, ' ')
			}
			for range 2 + rng.IntN(11) {
				s = append(s, letters[rng.IntN(len(letters))])
			}
			if rng.IntN(8) == 0 {
				s[len(s)-1] -= 'a' - 'A'
			}
		case r < 18:
			for range 1 + rng.IntN(3) {
				s = append(s, byte('0'+rng.IntN(10)))
			}
		default:
			for range 2 + rng.IntN(3) {
				s = append(s, punct[rng.IntN(len(punct))])
			}
		}
		if !seen[string(s)] {
			seen[string(s)] = true
			toks = append(toks, s)
		}
	}
	toks = append(toks, nil)
	return NewVocab(toks, []int32{int32(n - 1)})
}

// tinyVocab is the built-in tiny model's tokenizer (1k tokens).
func tinyVocab(b testing.TB) *Vocab {
	_, file, _, _ := runtime.Caller(0)
	tok, err := tokenizer.Load(filepath.Join(filepath.Dir(file), "..", "builtin", "tiny-tools", "tokenizer.json"))
	if err != nil {
		b.Fatal(err)
	}
	toks := make([][]byte, tok.VocabSize())
	var end []int32
	for id := range int32(len(toks)) {
		if tok.IsSpecial(id) {
			end = append(end, id)
			continue
		}
		toks[id] = tok.TokenBytes(id)
	}
	return NewVocab(toks, end)
}

// tokenize cuts text into the vocabulary's tokens, longest match first.
func tokenize(v *Vocab, text string) []int32 {
	var out []int32
	for p := 0; p < len(text); {
		node, best, bestLen := int32(0), int32(-1), 0
		for q := p; q < len(text); q++ {
			next := int32(-1)
			for e := v.first[node]; e < v.first[node+1]; e++ {
				if v.edgeByte[e] == text[q] {
					next = v.edgeNode[e]
					break
				}
			}
			if next < 0 {
				break
			}
			node = next
			if v.tokAt[node] < v.tokAt[node+1] {
				best, bestLen = v.toks[v.tokAt[node]], q-p+1
			}
		}
		out = append(out, best)
		p += bestLen
	}
	return out
}

const benchSchema = `{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]},"days":{"type":"integer"},"notes":{"type":"array","items":{"type":"string"},"maxItems":4}},"required":["city","unit","days","notes"],"additionalProperties":false}`

const benchDoc = `{"city": "San Francisco, California", "unit": "celsius", "days": 14, "notes": ["bring an umbrella", "the fog rolls in after noon", "layers"]}`

func benchVocabs(b *testing.B) []struct {
	name string
	v    *Vocab
} {
	return []struct {
		name string
		v    *Vocab
	}{{"vocab=1k-tiny", tinyVocab(b)}, {"vocab=32k", syntheticVocab(32000)}, {"vocab=152k", syntheticVocab(151936)}}
}

// BenchmarkMask: the cost of constrained decoding per generated token —
// the state advanced by the token, the mask of the new state looked up —
// with the schema's masks cached (warm: every request after the first of
// a schema), and applying the mask to the logits.
func BenchmarkMask(b *testing.B) {
	benchMask(b, benchVocabs(b))
}

// BenchmarkMaskRealVocab: the same on real byte-level BPE vocabularies,
// OpenAI's cl100k_base and o200k_base as shipped in the tiktoken-go loader
// module: their first 32,000 and 151,936 ranks (a BPE vocabulary cut at a
// rank is a BPE vocabulary: every token's merge parts rank lower) and the
// whole of each.
func BenchmarkMaskRealVocab(b *testing.B) {
	loader := tiktoken_loader.NewOfflineLoader()
	var vocabs []struct {
		name string
		v    *Vocab
	}
	for _, c := range []struct {
		file string
		cuts []int
	}{{"cl100k_base", []int{32000, 0}}, {"o200k_base", []int{151936, 0}}} {
		ranks, err := loader.LoadTiktokenBpe(c.file + ".tiktoken")
		if err != nil {
			b.Fatal(err)
		}
		for _, cut := range c.cuts {
			name := fmt.Sprintf("vocab=%dk-%s", len(ranks)/1000, c.file)
			if cut > 0 {
				name = fmt.Sprintf("vocab=%dk-%s-first", (cut+500)/1000, c.file)
			}
			vocabs = append(vocabs, struct {
				name string
				v    *Vocab
			}{name, rankVocab(ranks, cut)})
		}
	}
	benchMask(b, vocabs)
}

// rankVocab is a tiktoken rank table's first n ranks (0: all) as a
// Vocab, with an end token after them.
func rankVocab(ranks map[string]int, n int) *Vocab {
	if n <= 0 || n > len(ranks) {
		n = len(ranks)
	}
	toks := make([][]byte, n+1)
	for tok, rank := range ranks {
		if rank < n {
			toks[rank] = []byte(tok)
		}
	}
	return NewVocab(toks, []int32{int32(n)})
}

// tiktokenVocab is rankVocab of a tiktoken-go-loader vocabulary.
func tiktokenVocab(t testing.TB, name string, n int) *Vocab {
	t.Helper()
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	return rankVocab(ranks, n)
}

func benchMask(b *testing.B, vocabs []struct {
	name string
	v    *Vocab
}) {
	g, err := Compile([]byte(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	for _, bv := range vocabs {
		toks := tokenize(bv.v, benchDoc)
		c := NewCompiled(g, bv.v)
		run := func() {
			m := c.NewMatcher()
			for _, id := range toks {
				if !m.Mask().Has(id) {
					b.Fatalf("token %d (%q) masked", id, bv.v.bytes[id])
				}
				if err := m.Accept(id); err != nil {
					b.Fatal(err)
				}
			}
		}
		run() // fill the cache
		b.Run(bv.name+"/warm", func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				run()
			}
			reportPerToken(b, len(toks), cpu)
			b.ReportMetric(float64(len(toks)), "tokens")
		})
		b.Run(bv.name+"/cold", func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				c = NewCompiled(g, bv.v)
				run()
			}
			reportPerToken(b, len(toks), cpu)
			b.ReportMetric(float64(c.CachedMasks()), "states")
		})
		// Under a token budget (max_tokens 30 above the document's length)
		// each state also scans its tokens once for the highest cost after
		// them, and the last ones filter their masks: the first request.
		b.Run(bv.name+"/cold-budget", func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				c = NewCompiled(g, bv.v)
				m := c.NewMatcher()
				for i, id := range toks {
					m.MaskWithin(len(toks) + 30 - i - 2)
					if err := m.Accept(id); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportPerToken(b, len(toks), cpu)
		})
		logits := make([]float32, bv.v.size)
		m := c.NewMatcher()
		structural := m.Mask() // before '{': almost nothing allowed
		_ = m.AcceptBytes([]byte(`{"city": "`))
		inString := m.Mask() // in a string: almost everything
		for _, mk := range []struct {
			name string
			mask Mask
		}{{"structural", structural}, {"string", inString}} {
			b.Run(fmt.Sprintf("%s/apply-%s", bv.name, mk.name), func(b *testing.B) {
				for b.Loop() {
					mk.mask.Apply(logits)
				}
			})
		}
	}
}

// cpuTime is the process's CPU time (user and system) so far: on a machine
// shared with other work it is less inflated than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportPerToken reports wall and CPU microseconds per generated token.
func reportPerToken(b *testing.B, tokens int, cpuStart time.Duration) {
	per := float64(b.N * tokens)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per/1000, "µs/token")
	b.ReportMetric(float64((cpuTime()-cpuStart).Nanoseconds())/per/1000, "cpu-µs/token")
}
