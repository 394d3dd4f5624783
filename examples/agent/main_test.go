package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestAgentEmbedded(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := run(ctx, config{embedded: true, pace: 0.05, model: "pitstop-scripted-test", stream: stream,
			questions: []string{"What is (17+25)*3?", "What is 2^10 - 24?"}}, &out)
		cancel()
		if err != nil {
			t.Fatalf("stream=%v: %v\n%s", stream, err, out.String())
		}
		for _, want := range []string{"The result is 126.", "The result is 1000.", "2 calls, 2 server-side tool rounds"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("stream=%v: output lacks %q:\n%s", stream, want, out.String())
			}
		}
		t.Log(out.String())
	}
}

func TestAgentFailsWithoutServerTool(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), config{embedded: true, model: "pitstop-scripted-test", questions: []string{"/call get_weather {\"city\": \"Oslo\"}"}}, &out)
	if err == nil {
		t.Fatalf("accepted an answer the server did not compute:\n%s", out.String())
	}
}
