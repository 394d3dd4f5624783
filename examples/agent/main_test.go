package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// The default questions against the built-in tiny model on the CPU
// executor, in-process: the calculator and the clock run on the server, the
// third question is answered directly; every step is printed.
func TestAgentTinyModel(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := run(ctx, config{embedded: "builtin:tiny-tools", stream: stream, questions: strings.Split(defaultQuestions, "|")}, &out)
		cancel()
		if err != nil {
			t.Fatalf("stream=%v: %v\n%s", stream, err, out.String())
		}
		for _, want := range []string{
			"model tiny-tools",
			"model called  calculator(", "tool result   391", "391",
			"model called  current_time(", "Asia/Tokyo",
			"KV cache      ", "why: policy ",
			"no tool call: the model answered directly", "Paris",
			"3 calls, 2 server-side tool rounds",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("stream=%v: output lacks %q:\n%s", stream, want, out.String())
			}
		}
		t.Log(out.String())
	}
}

func TestAgentScripted(t *testing.T) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	err := run(ctx, config{embedded: scripted, pace: 0.05, stream: true,
		questions: []string{"What is (17+25)*3?", "What is 2^10 - 24?"}}, &out)
	cancel()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"model pitstop-scripted-test", "The result is 126.", "The result is 1000.", "2 calls, 2 server-side tool rounds"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A call of a tool the agent did not declare never comes back as a tool call
// (declared tools only, issue 15): the server turns it into text, runs
// nothing, and the agent reports that no tool was called.
func TestAgentUndeclaredToolIsText(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), config{embedded: scripted, questions: []string{"/call get_weather {\"city\": \"Oslo\"}"}}, &out)
	if err != nil || !strings.Contains(out.String(), "no tool call: the model answered directly") || !strings.Contains(out.String(), "0 server-side tool round(s)") {
		t.Fatalf("err %v, output:\n%s", err, out.String())
	}
}
