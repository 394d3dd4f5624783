package chat_test

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/models/chat"
)

func ExampleHermesParser() {
	tpl, _ := chat.Lookup("qwen2.5")
	p := tpl.NewParser(chat.WithIDs(func(i int) string { return fmt.Sprintf("call_%d", i) }))
	// Tokens arrive a few characters at a time.
	for _, delta := range []string{"Checking.<tool", "_call>\n{\"name\": \"get_w", "eather\", \"arguments\": {\"city\"", ": \"Paris\"}}\n</tool_call>"} {
		for _, e := range p.Feed(delta) {
			fmt.Printf("%s %q %q %q\n", e.Kind, e.Text, e.Name, e.Arguments)
		}
	}
	for _, e := range p.Close() {
		fmt.Printf("%s %q\n", e.Kind, e.Text)
	}
	// Output:
	// text "Checking." "" ""
	// tool_call_start "" "get_weather" ""
	// tool_call_args "{\"city\"" "" ""
	// tool_call_args ": \"Paris\"}" "" ""
	// tool_call_end "" "get_weather" "{\"city\": \"Paris\"}"
}
