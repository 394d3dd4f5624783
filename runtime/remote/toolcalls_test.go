package remote

import (
	"reflect"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
)

func ip(i int) *int { return &i }

func TestToolCallFragments(t *testing.T) {
	var tc toolCalls
	var evs []Event
	emit := func(e Event) { evs = append(evs, e) }
	// Two parallel calls, interleaved, the second's id before its name and
	// an argument fragment before the name.
	for _, f := range []wireToolCall{
		{Index: ip(0), ID: "c1", Function: wireFunction{Name: "lookup"}},
		{Index: ip(0), Function: wireFunction{Arguments: `{"ke`}},
		{Index: ip(1), ID: "c2"},
		{Index: ip(1), Function: wireFunction{Arguments: `{"city":`}},
		{Index: ip(0), Function: wireFunction{Arguments: `y": "a"}`}},
		{Index: ip(1), Function: wireFunction{Name: "weather"}},
		{Index: ip(1), Function: wireFunction{Arguments: ` "Paris"}`}},
	} {
		tc.add(f, emit)
	}
	calls, ok := tc.done()
	if !ok {
		t.Fatal("calls not complete")
	}
	want := []chat.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"key": "a"}`}, {ID: "c2", Name: "weather", Arguments: `{"city": "Paris"}`}}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %+v, want %+v", calls, want)
	}
	// Every call's start comes before its arguments, which add up.
	started := map[int]bool{}
	args := map[int]string{}
	for _, e := range evs {
		switch e.Kind {
		case EventToolCallStart:
			started[e.Index] = true
		case EventToolCallArgs:
			if !started[e.Index] {
				t.Errorf("arguments of call %d before its start", e.Index)
			}
			args[e.Index] += e.Text
		}
	}
	if args[0] != want[0].Arguments || args[1] != want[1].Arguments {
		t.Errorf("streamed arguments %v", args)
	}
}

func TestToolCallsWithoutIndex(t *testing.T) {
	// Servers that send no index: a new id opens a new call.
	var tc toolCalls
	for _, f := range []wireToolCall{
		{ID: "a", Function: wireFunction{Name: "f", Arguments: "{}"}},
		{ID: "b", Function: wireFunction{Name: "g", Arguments: `{"x":`}},
		{Function: wireFunction{Arguments: `1}`}},
	} {
		tc.add(f, func(Event) {})
	}
	calls, ok := tc.done()
	if !ok || len(calls) != 2 || calls[1].Arguments != `{"x":1}` || calls[0].Name != "f" {
		t.Errorf("calls %+v ok %v", calls, ok)
	}
	// A call that never gets a name is malformed.
	var bad toolCalls
	bad.add(wireToolCall{Index: ip(0), Function: wireFunction{Arguments: "{}"}}, func(Event) {})
	if _, ok := bad.done(); ok {
		t.Error("a call without a name was accepted")
	}
}
