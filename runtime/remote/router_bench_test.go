package remote

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
)

// BenchmarkGenerate is the router's time per generation outside the
// network and the backend, over three backends.
func BenchmarkGenerate(b *testing.B) {
	specs, _ := ParseSpecs([]string{"http://a:1,kind=vllm,http://b:1,http://c:1"})
	r, err := New(Config{Transport: testutil.CannedTransport{}, HealthInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)}, specs)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := userReq("p")
		for pb.Next() {
			req.sent = sentConversation{} // each generation a new call's first
			if _, err := r.Generate(ctx, req, "", func(Event) bool { return false }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// toolRounds is a conversation after n tool rounds, each an assistant's
// call and a 4 KiB result.
func toolRounds(n int) []chat.Message {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: strings.Repeat("You are an agent. ", 50)}, {Role: chat.RoleUser, Content: "Find it."}}
	for i := range n {
		id := "call_" + strconv.Itoa(i)
		msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: id, Name: "search", Arguments: `{"q":"it"}`}}},
			chat.Message{Role: chat.RoleTool, ToolCallID: id, Name: "search", Content: strings.Repeat("result line <b>& more</b>\n", 160)})
	}
	return msgs
}

// BenchmarkBodyToolRounds is the request body of a call's 20 generations
// (a tool round between each, the conversation re-sent longer each time):
// "reencode" encodes every generation's whole conversation (the router
// before it kept the last encoding), "append" only what each round added.
func BenchmarkBodyToolRounds(b *testing.B) {
	specs, _ := ParseSpecs([]string{"http://a:1,kind=vllm"})
	be, err := newBackend(specs[0], nil)
	if err != nil {
		b.Fatal(err)
	}
	all := toolRounds(19)
	for _, keep := range []bool{false, true} {
		name := map[bool]string{false: "reencode", true: "append"}[keep]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := &Request{Tools: []chat.Tool{{Name: "search"}}}
				for g := range 20 {
					req.Messages = all[: 2+2*g : 2+2*g]
					if !keep {
						req.sent = sentConversation{}
					}
					if _, err := be.body(req, 0, -1); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkExpirePrograms is one expiry scan of the router's programs, none
// idle long enough to go: the time the scan holds the router's lock,
// which every call's pick and rank take. Before the runtime forgot
// anonymous calls' programs at their end, a router at 1,000 calls/s
// without program ids held 600,000 of them after 10 minutes, and scanned
// them on every health check.
func BenchmarkExpirePrograms(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run("programs="+strconv.Itoa(n), func(b *testing.B) {
			specs, _ := ParseSpecs([]string{"http://a:1"})
			r, err := New(Config{Transport: testutil.CannedTransport{}, HealthInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)}, specs)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			now := time.Now()
			for i := range n {
				p := "call-" + strconv.Itoa(i)
				r.attained[p], r.lastUsed[p] = 10, now
			}
			for b.Loop() {
				r.expirePrograms(now)
			}
			if len(r.lastUsed) != n {
				b.Fatalf("%d programs left of %d", len(r.lastUsed), n)
			}
		})
	}
}
