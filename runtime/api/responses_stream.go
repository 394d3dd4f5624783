package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/runtime"
)

// respEvents writes the Responses API's typed events: response.created,
// response.in_progress, then per output item output_item.added, its
// deltas (output_text.delta, function_call_arguments.delta) and its done
// events, and response.completed (or response.failed).
type respEvents struct {
	c      echo.Context
	obj    *responseObject
	seq    int
	failed bool
	open   int // index in obj.Output of the item being written; -1: none
	text   strings.Builder
}

func (w *respEvents) commit() {
	h := w.c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.c.Response().WriteHeader(http.StatusOK)
	w.open = -1
	snapshot := *w.obj
	w.send("response.created", map[string]any{"response": &snapshot})
	w.send("response.in_progress", map[string]any{"response": &snapshot})
	w.flush()
}

func (w *respEvents) send(typ string, fields map[string]any) {
	if w.failed {
		return
	}
	fields["type"] = typ
	fields["sequence_number"] = w.seq
	w.seq++
	data, _ := json.Marshal(fields)
	buf := make([]byte, 0, len(data)+len(typ)+16)
	buf = append(buf, "event: "...)
	buf = append(buf, typ...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := w.c.Response().Write(buf); err != nil {
		w.failed = true
	}
}

func (w *respEvents) flush() {
	if !w.failed {
		w.c.Response().Flush()
	}
}

// add opens an output item.
func (w *respEvents) add(it outputItem) int {
	w.obj.Output = append(w.obj.Output, it)
	i := len(w.obj.Output) - 1
	w.send("response.output_item.added", map[string]any{"output_index": i, "item": it})
	return i
}

// closeItem finishes the item being written.
func (w *respEvents) closeItem() {
	if w.open < 0 {
		return
	}
	i := w.open
	it := &w.obj.Output[i]
	text := w.text.String()
	switch it.Type {
	case "message":
		part := contentItem{Type: "output_text", Text: text, Annotations: []any{}}
		w.send("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "text": text, "logprobs": []any{}})
		w.send("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "part": part})
		it.Content = []contentItem{part}
	case "function_call":
		w.send("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i, "name": it.Name, "arguments": text})
		it.Arguments = &text
	}
	it.Status = "completed"
	w.send("response.output_item.done", map[string]any{"output_index": i, "item": *it})
	w.open = -1
	w.text.Reset()
}

func (w *respEvents) deltas(ds []runtime.Delta) {
	for _, d := range ds {
		switch d.Kind {
		case runtime.DeltaContent:
			if d.Text == "" {
				continue
			}
			if w.open < 0 || w.obj.Output[w.open].Type != "message" {
				w.closeItem()
				it := outputItem{Type: "message", ID: newID("msg_"), Status: "in_progress", Role: "assistant", Content: []contentItem{}}
				w.open = w.add(it)
				w.send("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": w.open, "content_index": 0,
					"part": contentItem{Type: "output_text", Text: "", Annotations: []any{}}})
			}
			w.text.WriteString(d.Text)
			w.send("response.output_text.delta", map[string]any{"item_id": w.obj.Output[w.open].ID, "output_index": w.open, "content_index": 0, "delta": d.Text, "logprobs": []any{}})
		case runtime.DeltaToolCallStart:
			w.closeItem()
			empty := ""
			w.open = w.add(outputItem{Type: "function_call", ID: "fc_" + d.ID, Status: "in_progress", CallID: d.ID, Name: d.Name, Arguments: &empty})
		case runtime.DeltaToolCallArgs:
			if w.open < 0 || w.obj.Output[w.open].Type != "function_call" {
				continue
			}
			w.text.WriteString(d.Text)
			w.send("response.function_call_arguments.delta", map[string]any{"item_id": w.obj.Output[w.open].ID, "output_index": w.open, "delta": d.Text})
		case runtime.DeltaToolRound:
			w.closeItem()
			if d.Round == nil {
				continue
			}
			for _, tc := range d.Round.Calls {
				args, content := tc.Arguments, tc.Content
				it := outputItem{Type: "pitstop_tool_call", ID: "ptc_" + tc.ID, Status: "completed", CallID: tc.ID, Name: tc.Name,
					Arguments: &args, Output: &content, IsError: tc.IsError}
				i := w.add(it)
				w.send("response.output_item.done", map[string]any{"output_index": i, "item": it})
			}
		}
	}
	w.flush()
}
