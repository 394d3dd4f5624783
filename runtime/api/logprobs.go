package api

import "github.com/pitstop-llm/pitstop/runtime"

// logprobsOut is OpenAI's choice.logprobs.
type logprobsOut struct {
	Content []tokenLogprob `json:"content"`
	Refusal []tokenLogprob `json:"refusal"`
}

type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// byteInts is bytes as OpenAI writes them: an array of integers.
func byteInts(b []byte) []int {
	out := make([]int, len(b))
	for i, x := range b {
		out[i] = int(x)
	}
	return out
}

func toLogprobs(es []runtime.TokenLogprob) *logprobsOut {
	out := &logprobsOut{Content: make([]tokenLogprob, len(es))}
	for i, e := range es {
		t := tokenLogprob{Token: e.Token, Logprob: e.Logprob, Bytes: byteInts(e.Bytes), TopLogprobs: []topLogprob{}}
		for _, a := range e.Top {
			t.TopLogprobs = append(t.TopLogprobs, topLogprob{Token: a.Token, Logprob: a.Logprob, Bytes: byteInts(a.Bytes)})
		}
		out.Content[i] = t
	}
	return out
}
