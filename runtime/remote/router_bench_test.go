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

// BenchmarkExpirePrograms is one tick of the router's expiry, none of its
// programs idle long enough to go: the time it holds the router's lock,
// which every call's pick and rank take. The scan of every program it
// replaced held it 2.4–4 ms at 100,000.
func BenchmarkExpirePrograms(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run("programs="+strconv.Itoa(n), func(b *testing.B) {
			r := newIdleRouter(b, DefaultProgramTTL)
			now := time.Now()
			for i := range n {
				r.useProgram("call-"+strconv.Itoa(i), now)
			}
			for b.Loop() {
				r.expirePrograms(now)
			}
			if len(r.used) != n {
				b.Fatalf("%d programs left of %d", len(r.used), n)
			}
		})
	}
}

// BenchmarkRouterProgramCall is a call's work on the router's programs
// (its rank, then its generation's record) among 100,000 remembered
// programs, with the expiry run between calls at 1,000 calls/s (a tick a
// second of the calls' own clock, every 1,000 calls): named, the calls of
// the remembered programs in turn; anonymous, a new program per call,
// forgotten at its end (Router.ProgramDone).
func BenchmarkRouterProgramCall(b *testing.B) {
	const live, perSecond = 100_000, 1_000
	for _, anonymous := range []bool{false, true} {
		name := "named"
		if anonymous {
			name = "anonymous"
		}
		b.Run(name+"/programs="+strconv.Itoa(live), func(b *testing.B) {
			r := newIdleRouter(b, DefaultProgramTTL)
			t0 := time.Now()
			programs := make([]string, live)
			for i := range programs {
				programs[i] = "p" + strconv.Itoa(i)
				r.useProgram(programs[i], t0)
			}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				now := t0.Add(time.Duration(i) * time.Second / perSecond)
				p := programs[i%live]
				if anonymous {
					p = "call-" + strconv.Itoa(i)
				}
				r.Rank(p)
				r.useProgram(p, now)
				if anonymous {
					r.ProgramDone(p)
				}
				if i%perSecond == perSecond-1 {
					r.expirePrograms(now)
				}
				i++
			}
		})
	}
}
