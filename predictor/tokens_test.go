package predictor

import (
	"strings"
	"testing"
)

func TestTiktokenCounter(t *testing.T) {
	gpt2, err := TiktokenCounter(EncodingGPT2)
	if err != nil {
		t.Fatal(err)
	}
	// GPT-2 (r50k_base) counts made by another implementation, npm
	// gpt-tokenizer.
	for text, want := range map[string]int{
		`[{"name":"get_lawsuit_cases","arguments":{"company_name":"Facebook","status":"all","year":2018}}]`: 29,
		`[{"name":"calculate_velocity","arguments":{"distance":50,"duration":2,"unit":"km/h"}}]`:            30,
		`[{"name":"get_latest_carbon_intensity","arguments":{"zone":"Great Britain"}}]`:                     22,
		"Hello world, this is a test of GPT-2 tokenization.\n\nIt works!":                                   20,
		"": 0,
	} {
		if got := gpt2(text); got != want {
			t.Errorf("r50k_base tokens of %q = %d, want %d", text, got, want)
		}
	}
	gpt4, err := TiktokenCounter(EncodingGPT4)
	if err != nil {
		t.Fatal(err)
	}
	// OpenAI's tiktoken example: "tiktoken is great!" is 6 cl100k_base tokens.
	if got := gpt4("tiktoken is great!"); got != 6 {
		t.Errorf("cl100k_base tokens of %q = %d, want 6", "tiktoken is great!", got)
	}
	if _, err := TiktokenCounter("gpt2"); err == nil || !strings.Contains(err.Error(), "r50k_base") {
		t.Errorf("unknown encoding: error %v, want one listing the known", err)
	}
}
