package runtime

import (
	"context"
	"log/slog"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// BenchmarkPrompt is the work before a call reaches the engine: render the
// conversation with the chat template and tokenize it.
func BenchmarkPrompt(b *testing.B) {
	m, err := NewScriptedTestModel()
	if err != nil {
		b.Fatal(err)
	}
	reg := calcDef(b)
	msgs := []chat.Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: "What is (17+25)*3?"}}
	b.ReportAllocs()
	for b.Loop() {
		p, err := m.Template().RenderSpans(msgs, reg, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Encode(m.Tokenizer()); err != nil {
			b.Fatal(err)
		}
	}
}

func calcDef(b *testing.B) []chat.Tool {
	rt, err := New(Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	offered, _, err := rt.resolveTools("", []chat.Tool{{Name: "calculator"}})
	if err != nil {
		b.Fatal(err)
	}
	return offered
}

// BenchmarkChat is one whole server-side tool call through the runtime
// (unpaced engine): render, tokenize, schedule, decode and parse every
// token, run the calculator, render and tokenize its result, resume.
func BenchmarkChat(b *testing.B) { benchCalculatorChat(b, Config{}) }

// benchCalculatorChat is BenchmarkChat's loop on a runtime of cfg (its
// logger discarded).
func benchCalculatorChat(b *testing.B, cfg Config) {
	cfg.Logger = slog.New(slog.DiscardHandler)
	rt, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	req := ChatRequest{Messages: []chat.Message{{Role: "user", Content: "What is (17+25)*3?"}}, Tools: []chat.Tool{{Name: "calculator"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
