package workload

import (
	"reflect"
	"strings"
	"testing"
)

func TestCodingFollowsItsOptions(t *testing.T) {
	o := DefaultCodingOptions()
	o.Programs = 200
	w, err := CodingWith(3, o)
	if err != nil {
		t.Fatal(err)
	}
	tools, kinds := 0, map[string]int{}
	for _, p := range w.Programs {
		if len(p.Calls) != 1 {
			t.Fatalf("%s: %d calls, want one session call", p.ID, len(p.Calls))
		}
		n := len(p.Calls[0].Segments) - 1
		if n > o.ToolCallsMax {
			t.Fatalf("%s: %d tool calls > %d", p.ID, n, o.ToolCallsMax)
		}
		_, final := p.Contexts()
		if final[0] > o.MaxContext {
			t.Fatalf("%s: final context %d > %d", p.ID, final[0], o.MaxContext)
		}
		if p.Calls[0].NewTokens < o.FirstPromptMin {
			t.Fatalf("%s: first prompt %d < %d", p.ID, p.Calls[0].NewTokens, o.FirstPromptMin)
		}
		for _, s := range p.Calls[0].Segments[:n] {
			if s.ToolTime <= 0 || s.ToolTime > o.ToolMaxTime || s.ToolReturn < 1 || s.ToolReturn > o.ToolReturnMax {
				t.Fatalf("%s: tool segment %+v out of bounds", p.ID, s)
			}
			kinds[s.Tool]++
		}
		tools += n
	}
	if mean := float64(tools) / float64(len(w.Programs)); mean < 0.8*o.ToolCallsMean || mean > 1.1*o.ToolCallsMean {
		t.Fatalf("mean tool calls %g, want about %g", mean, o.ToolCallsMean)
	}
	if kinds["read"] <= kinds["build"] || kinds["build"] == 0 {
		t.Fatalf("tool mix %v does not follow the weights", kinds)
	}
	again, _ := CodingWith(3, o)
	if !reflect.DeepEqual(w, again) {
		t.Fatal("the same seed gave two workloads")
	}
	other, _ := CodingWith(4, o)
	if reflect.DeepEqual(w.Programs, other.Programs) {
		t.Fatal("seeds 3 and 4 gave the same programs")
	}
}

// Splitting a session into client-side steps keeps every token and tool:
// a tool that ends a call becomes the next call's think time and new tokens.
func TestCodingSplitKeepsTheSession(t *testing.T) {
	o := DefaultCodingOptions()
	o.Programs = 50
	whole, err := CodingWith(5, o)
	if err != nil {
		t.Fatal(err)
	}
	o.ToolsPerCall = 3
	split, err := CodingWith(5, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range whole.Programs {
		a, b := &whole.Programs[i], &split.Programs[i]
		_, fa := a.Contexts()
		_, fb := b.Contexts()
		if fa[len(fa)-1] != fb[len(fb)-1] {
			t.Fatalf("%s: final context %d whole, %d split", a.ID, fa[len(fa)-1], fb[len(fb)-1])
		}
		tools, think := 0.0, 0.0
		for _, s := range a.Calls[0].Segments {
			tools += s.ToolTime
		}
		for _, c := range b.Calls {
			think += c.ThinkTime
			for _, s := range c.Segments {
				think += s.ToolTime
			}
			if n := len(c.Segments) - 1; n > o.ToolsPerCall {
				t.Fatalf("%s/%s: %d in-call tools > %d", b.ID, c.ID, n, o.ToolsPerCall)
			}
		}
		if diff := tools - think; diff > 1e-9 || diff < -1e-9 {
			t.Fatalf("%s: tool time %g whole, %g split", a.ID, tools, think)
		}
		if segs := len(a.Calls[0].Segments); segs > o.ToolsPerCall+1 && len(b.Calls) < 2 {
			t.Fatalf("%s: %d segments not split", a.ID, segs)
		}
	}
}

func TestFanoutShape(t *testing.T) {
	o := DefaultFanoutOptions()
	o.Programs = 100
	w, err := FanoutWith(2, o)
	if err != nil {
		t.Fatal(err)
	}
	subs := 0
	for _, p := range w.Programs {
		first, last := p.Calls[0], p.Calls[len(p.Calls)-1]
		if first.ID != "plan" || len(first.Parents) != 0 || last.ID != "synthesis" || !last.ContinueParent || last.Parents[0] != "plan" {
			t.Fatalf("%s: calls %s .. %s (%v)", p.ID, first.ID, last.ID, last.Parents)
		}
		n := len(p.Calls) - 2
		if n < 1 || n > o.SubagentsMax || len(last.Parents) != n+1 {
			t.Fatalf("%s: %d subagents, synthesis waits for %d", p.ID, n, len(last.Parents)-1)
		}
		findings := 0
		for _, c := range p.Calls[1 : n+1] {
			if c.ContinueParent || len(c.Parents) != 1 || c.Parents[0] != "plan" {
				t.Fatalf("%s/%s: a subagent must start after the plan in its own context", p.ID, c.ID)
			}
			for _, s := range c.Segments[:len(c.Segments)-1] {
				if s.ToolTime <= 0 || s.ToolTime > o.ToolMaxTime || s.ToolReturn < 1 {
					t.Fatalf("%s/%s: tool segment %+v", p.ID, c.ID, s)
				}
			}
			findings += c.Segments[len(c.Segments)-1].Decode
		}
		if last.NewTokens != findings {
			t.Fatalf("%s: synthesis reads %d tokens, the subagents found %d", p.ID, last.NewTokens, findings)
		}
		subs += n
	}
	if mean := float64(subs) / float64(len(w.Programs)); mean < 3 || mean > 5 {
		t.Fatalf("mean subagents %g, want about %g", mean, o.SubagentsMean)
	}
}

func TestAgentOptionsRejectBadInput(t *testing.T) {
	c := DefaultCodingOptions()
	c.ToolCallsMax = 0
	if _, err := CodingWith(1, c); err == nil || !strings.Contains(err.Error(), "tool calls") {
		t.Errorf("coding with max 0 tool calls: %v", err)
	}
	c = DefaultCodingOptions()
	c.Tools = []ToolKind{{Name: "x", Weight: 0, Median: 1}}
	if _, err := CodingWith(1, c); err == nil || !strings.Contains(err.Error(), "weights") {
		t.Errorf("coding with zero weights: %v", err)
	}
	f := DefaultFanoutOptions()
	f.ParallelMean = -1
	if _, err := FanoutWith(1, f); err == nil || !strings.Contains(err.Error(), "parallel mean") {
		t.Errorf("fanout with a negative parallel mean: %v", err)
	}
	if w, err := LoadWith("coding", 1, Options{Coding: &c}); err == nil {
		t.Errorf("LoadWith passed bad coding options: %v", w.Name)
	}
}
