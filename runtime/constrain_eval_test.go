package runtime

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/training/tinytools"
)

// TestTinyToolCallValidity plays eval-tiny's held-out questions (the eval
// stream of the training seed, variants by weight, each variant's system
// prompt and tools) through the runtime on the CPU executor, with and
// without constrained tool calls, and counts the questions that need a
// tool whose first turn made a valid call: it names an offered tool and
// its arguments validate against the tool's registered schema. Under the
// grammar every call is valid; the test asserts that, and logs both
// rates (PITSTOP_EVAL_N questions, default 12; docs/results.md has 200).
func TestTinyToolCallValidity(t *testing.T) {
	n := 12
	if s := os.Getenv("PITSTOP_EVAL_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	ts, err := tinytools.NewToolset()
	if err != nil {
		t.Fatal(err)
	}
	gen := tinytools.NewGenerator(ts)
	var exs []tinytools.Example
	for i := 0; len(exs) < n; i++ {
		ex, err := gen.Example(1, tinytools.StreamEval, i, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Calls) > 0 && !tinytools.Variants[ex.Variant].Short {
			exs = append(exs, ex)
		}
	}
	for _, constrained := range []bool{false, true} {
		rt := tinyRuntime(t, Config{ClientToolTTL: -1, ConstrainToolCalls: constrained, MaxToolRounds: 1})
		schemas := map[string]*jsonschema.Schema{}
		valid, calls, invalid := 0, 0, 0
		for _, ex := range exs {
			v := tinytools.Variants[ex.Variant]
			var msgs []chat.Message
			if v.System != "" {
				msgs = append(msgs, chat.Message{Role: chat.RoleSystem, Content: v.System})
			}
			msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: ex.User})
			var offered []chat.Tool
			for _, name := range v.Tools {
				offered = append(offered, chat.Tool{Name: name})
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			res, err := rt.ChatSync(ctx, ChatRequest{Messages: msgs, Tools: offered, ParallelToolCalls: true, MaxTokens: 120})
			cancel()
			if err != nil && AsError(err).Kind != ErrToolLoop {
				t.Fatal(err)
			}
			if res == nil || len(res.Rounds) == 0 {
				if res != nil {
					t.Logf("constrained=%v: no call for %q: %s %q (%v)", constrained, ex.User, res.FinishReason, res.Content, err)
				}
				continue
			}
			calls++
			c := res.Rounds[0].Calls[0]
			ok := false
			if tl, found := rt.Tools().Get(c.Name); found && strings.Contains(strings.Join(v.Tools, ","), c.Name) {
				s := schemas[c.Name]
				if s == nil {
					s = testutil.SchemaValidator(t, string(tl.Definition().Function.Parameters))
					schemas[c.Name] = s
				}
				inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Arguments))
				ok = err == nil && s.Validate(inst) == nil && json.Valid([]byte(c.Arguments))
			}
			if ok {
				valid++
			} else {
				invalid++
				t.Logf("constrained=%v: invalid call %s(%s) for %q", constrained, c.Name, c.Arguments, ex.User)
			}
		}
		t.Logf("constrained=%v: %d questions that need a tool; %d made a call in the first turn, %d valid (%.1f%% of questions), %d invalid",
			constrained, len(exs), calls, valid, 100*float64(valid)/float64(len(exs)), invalid)
		if constrained && invalid > 0 {
			t.Errorf("%d invalid calls under the grammar", invalid)
		}
	}
}
