package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	badCfg := filepath.Join(dir, "bad")
	if err := os.MkdirAll(badCfg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"config.json": `{"model_type": "llama", "hidden_size": `, "tokenizer.json": `{}`} {
		if err := os.WriteFile(filepath.Join(badCfg, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"missing model dir", []string{"--model", filepath.Join(dir, "none")}, []string{"no such directory"}},
		{"not a model dir", []string{"--model", dir}, []string{"no config.json"}},
		{"bad config", []string{"--model", badCfg}, []string{"config.json"}},
		{"unknown builtin", []string{"--model", "builtin:huge"}, []string{`unknown built-in model "huge"`, "tiny-tools"}},
		{"unknown template", []string{"--chat-template", "alpaca"}, []string{`unknown template "alpaca"`, "qwen2.5"}},
		{"profile with a real model", []string{"--profile", "a100-40g-gptj-6b"}, []string{"--profile applies to --model scripted-test only"}},
		{"calibrate with scripted", []string{"--model", "scripted-test", "--calibrate", "1s"}, []string{"--calibrate applies to a real model"}},
		{"unknown profile", []string{"--model", "scripted-test", "--profile", "tpu"}, []string{`unknown profile "tpu"`}},
		{"negative kv", []string{"--kv-tokens", "-1"}, []string{"--kv-tokens"}},
		{"unknown policy", []string{"--policy", "nope"}, []string{`unknown policy "nope"`}},
		{"unknown predictor", []string{"--model", "scripted-test", "--predictor", "crystal-ball"}, []string{`unknown length predictor "crystal-ball"`, "history"}},
		{"missing length model", []string{"--model", "scripted-test", "--predictor", filepath.Join(dir, "none.onnx")}, []string{"none.onnx: no such file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := pitstop(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stdout != "" {
				t.Errorf("want one line on stderr, got stdout %q stderr %q", stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

// TestServeTinyModel runs `pitstop serve` with its defaults (the built-in
// tiny model on the CPU executor), asks it a calculator question with
// go-openai and stops it with SIGTERM.
func TestServeTinyModel(t *testing.T) {
	p := startServe(t, "--calibrate", "200ms")
	defer func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
			if p.err != nil {
				t.Errorf("serve exited with %v; log:\n%s", p.err, p.logs.String())
			}
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			t.Errorf("serve did not stop on SIGTERM")
		}
	}()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = p.url("/v1")
	client := openai.NewClientWithConfig(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:    "tiny-tools",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is 12 * 12?"}},
		Tools:    []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "calculator"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; !strings.Contains(got, "144") || resp.Header().Get("X-Pitstop-Tool-Rounds") != "1" {
		t.Errorf("answer %q, tool rounds %q", got, resp.Header().Get("X-Pitstop-Tool-Rounds"))
	}
	if !strings.Contains(p.logs.String(), "executor=cpu") || !strings.Contains(p.logs.String(), "tiny-tools") {
		t.Errorf("start-up log does not say what is served:\n%s", p.logs.String())
	}
}
