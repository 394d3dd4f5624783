package chat_test

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/models/chat"
)

func ExampleHermesParser() {
	tpl, _ := chat.Lookup("qwen2.5")
	p := tpl.NewParser(chat.WithIDs(func(i int) string { return fmt.Sprintf("call_%d", i) }))
	// The output arrives a few characters at a time. The tags the model
	// wrote as marker tokens are special pieces; text that spells a tag
	// is content.
	pieces := []struct {
		text    string
		special bool
	}{
		{`Checking. You wrote "<tool_call>".`, false},
		{"<tool_call>", true},
		{"\n{\"name\": \"get_w", false},
		{"eather\", \"arguments\": {\"city\"", false},
		{": \"Paris\"}}\n", false},
		{"</tool_call>", true},
	}
	for _, pc := range pieces {
		for _, e := range p.Feed(pc.text, pc.special) {
			fmt.Printf("%s %q %q %q\n", e.Kind, e.Text, e.Name, e.Arguments)
		}
	}
	for _, e := range p.Close() {
		fmt.Printf("%s %q\n", e.Kind, e.Text)
	}
	// Output:
	// text "Checking. You wrote \"<tool_call>\"." "" ""
	// tool_call_start "" "get_weather" ""
	// tool_call_args "{\"city\"" "" ""
	// tool_call_args ": \"Paris\"}" "" ""
	// tool_call_end "" "get_weather" "{\"city\": \"Paris\"}"
}
