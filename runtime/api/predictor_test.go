package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
)

// envORTFallbackChild marks the child process of TestLengthFallback: its
// PITSTOP_ORT_LIB is bad, and ONNX Runtime is loaded (or not) once per
// process.
const envORTFallbackChild = "PITSTOP_TEST_ORT_FALLBACK_CHILD"

// With no usable ONNX Runtime library (a path with nothing there, a file
// that is not a library) the server asked for the ONNX length predictor
// serves with history-based estimates, and says so once in its log and in
// /metrics.
func TestLengthFallback(t *testing.T) {
	if os.Getenv(envORTFallbackChild) != "" {
		lengthFallbackChild(t)
		return
	}
	garbage := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	if err := os.WriteFile(garbage, []byte("not a shared library"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, lib := range []string{filepath.Join(t.TempDir(), "missing", "libonnxruntime.so.1"), garbage} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLengthFallback$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envORTFallbackChild+"=1", "PITSTOP_ORT_LIB="+lib)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestLengthFallback") {
			t.Errorf("PITSTOP_ORT_LIB=%s: %v\n%s", lib, err, out)
		}
	}
}

func lengthFallbackChild(t *testing.T) {
	l, err := runtime.LoadLength(runtime.LengthONNX)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Source != runtime.LengthHistory || l.Requested != runtime.LengthONNX || l.Fallback == "" {
		t.Fatalf("PITSTOP_ORT_LIB=%s: loaded %+v, want the history fallback with a reason", os.Getenv("PITSTOP_ORT_LIB"), l)
	}
	t.Logf("fallback reason: %s", l.Fallback)
	var logs bytes.Buffer
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Length: l, Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	// It serves, with predictions from the program's history.
	for range 2 {
		res, err := ts.client(map[string]string{HeaderProgram: "agent"}).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Tools: []openai.Tool{calculatorDecl()}, Messages: []openai.ChatCompletionMessage{userMsg("What is (17+25)*3?")}})
		if err != nil || res.Choices[0].Message.Content != "The result is 126." {
			t.Fatalf("chat: %+v %v", res, err)
		}
	}
	if n := strings.Count(logs.String(), "using history-based estimates"); n != 1 {
		t.Errorf("the fallback is logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "PITSTOP_ORT_LIB") && !strings.Contains(logs.String(), "onnx runtime") {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
	resp, err := http.Get(ts.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	info := regexp.MustCompile(`(?m)^pitstop_predictor_info\{fallback="((?:[^"\\]|\\.)+)",model="default",requested="onnx",source="history"\} 1$`).FindSubmatch(body)
	if info == nil {
		t.Errorf("/metrics has no pitstop_predictor_info for the history fallback:\n%s", grepLines(body, "pitstop_predictor"))
	}
	if !regexp.MustCompile(`(?m)^pitstop_predictor_length_error_tokens_count\{source="history"\} 4$`).Match(body) {
		t.Errorf("/metrics: want 4 segments of length error from history:\n%s", grepLines(body, "pitstop_predictor_length"))
	}
}

func grepLines(data []byte, sub string) string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
