package remote

import (
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

// vllmStream is a 20-token reply as vLLM streams it: id, object,
// created and model in every event.
func vllmStream() string {
	var b strings.Builder
	for i := range 20 {
		b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764259200,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"tok `)
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteString(`"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764259200,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764259200,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":12,"total_tokens":33,"completion_tokens":21,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\ndata: [DONE]\n\n")
	return b.String()
}

// BenchmarkReadStream is a reply's stream read by the router (its events
// decoded, its text gathered) on one backend's pooled decoder: the
// loopback benchmark's three-event reply, and a 20-token vLLM stream.
func BenchmarkReadStream(b *testing.B) {
	for _, c := range []struct{ name, stream string }{{"reply=canned", testutil.CannedReply}, {"reply=vllm20", vllmStream()}} {
		b.Run(c.name, func(b *testing.B) {
			be := &Backend{}
			var r strings.Reader
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(c.stream)
				if _, err := be.readStream(&r, func(Event) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
