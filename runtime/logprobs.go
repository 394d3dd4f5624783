package runtime

import (
	"math"

	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// MaxTopLogprobs is the most alternatives a token's logprobs may list.
const MaxTopLogprobs = 20

// TokenLogprob is a content token with its log probability and the most
// likely alternatives at its position (OpenAI's logprobs.content entry).
type TokenLogprob struct {
	Token   string
	Bytes   []byte
	Logprob float64
	Top     []TopLogprob
}

// TopLogprob is one alternative token.
type TopLogprob struct {
	Token   string
	Bytes   []byte
	Logprob float64
}

// logprobsOf is token id's entry from the logits it was drawn from (after
// the grammar's mask: the distribution the sampler drew from at
// temperature 1), with the top most likely tokens.
func logprobsOf(tok *tokenizer.Tokenizer, logits []float32, id int32, top int) TokenLogprob {
	mx := float32(math.Inf(-1))
	for _, l := range logits {
		mx = max(mx, l)
	}
	z := 0.0
	for _, l := range logits {
		if !math.IsInf(float64(l), -1) {
			z += math.Exp(float64(l - mx))
		}
	}
	logZ := float64(mx) + math.Log(z)
	e := TokenLogprob{Token: string(tok.TokenBytes(id)), Bytes: tok.TokenBytes(id), Logprob: float64(logits[id]) - logZ}
	if top <= 0 {
		return e
	}
	// The top tokens by one pass with a small sorted list.
	best := make([]int32, 0, top)
	for i, l := range logits {
		if math.IsInf(float64(l), -1) || (len(best) == top && l <= logits[best[top-1]]) {
			continue
		}
		j := len(best)
		if j < top {
			best = append(best, 0)
		} else {
			j = top - 1
		}
		for ; j > 0 && logits[best[j-1]] < l; j-- {
			best[j] = best[j-1]
		}
		best[j] = int32(i)
	}
	for _, b := range best {
		e.Top = append(e.Top, TopLogprob{Token: string(tok.TokenBytes(b)), Bytes: tok.TokenBytes(b), Logprob: float64(logits[b]) - logZ})
	}
	return e
}

// certain is the entry of a token a scripted model forced: its
// distribution is all on that token (log probability 0), so the token is
// its only alternative.
func certain(tok *tokenizer.Tokenizer, id int32, top int) TokenLogprob {
	e := TokenLogprob{Token: string(tok.TokenBytes(id)), Bytes: tok.TokenBytes(id)}
	if top > 0 {
		e.Top = []TopLogprob{{Token: e.Token, Bytes: e.Bytes}}
	}
	return e
}
