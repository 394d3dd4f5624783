package runtime

import (
	"log/slog"
	"strings"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// toolCallProvenance finds the model's marker tokens (chat.MarkerTokens;
// a stop token is never one) and where its parsers accept tool-call markup
// from (chat.ProvenanceFor, strict from Config.StrictToolCalls). When text
// alone can call a tool, or strict mode leaves the model no way to call
// one, it says so once in the log.
func toolCallProvenance(model string, tmpl chat.Template, tok *tokenizer.Tokenizer, stop map[int32]bool, strict bool, log *slog.Logger) (map[int32]string, chat.Provenance) {
	mk := tmpl.ToolCallMarkup()
	markers := chat.MarkerTokens(mk, tok)
	for id := range markers {
		if stop[id] {
			delete(markers, id)
		}
	}
	prov := chat.ProvenanceFor(mk, markers, strict)
	opens := false
	for _, m := range markers {
		opens = opens || m == mk.Open
	}
	var why []string
	if !opens {
		why = append(why, "the tokenizer has no token of its own for "+mk.Open)
	}
	if mk.Unmarked {
		why = append(why, "the "+tmpl.Name()+" format writes tool calls that no marker opens (JSON without "+mk.Open+")")
	}
	switch {
	case prov.TextCalls():
		log.Warn("tool calls can be made by plain text: a model output that spells one, such as an echo of a user's message, runs a tool; strict tool calls (runtime.Config.StrictToolCalls) refuse such calls (docs/tool-call-provenance.md)",
			"model", model, "template", tmpl.Name(), "why", strings.Join(why, "; "))
	case strict && !opens:
		log.Warn("strict tool calls: the model cannot call tools, its tool calls are content",
			"model", model, "template", tmpl.Name(), "why", strings.Join(why, "; "))
	case strict && mk.Unmarked:
		log.Info("strict tool calls: only calls opened by "+mk.Open+" run; JSON calls without it are content",
			"model", model, "template", tmpl.Name())
	}
	return markers, prov
}

// newTokenReader reads a turn's tokens into a fresh parser of the model's
// template, with their provenance.
func (rt *Runtime) newTokenReader() *chat.TokenReader {
	return chat.NewTokenReader(rt.tok, rt.markup, rt.tmpl.NewParser(chat.WithProvenance(rt.prov)))
}
