package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// listedItem is an input item in a list: a message, a function call or a
// function call's output, as the request gave it (instructions are not
// input items).
type listedItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Status    string          `json:"status,omitempty"`
	Role      string          `json:"role,omitempty"`
	Content   []listedContent `json:"content,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments *string         `json:"arguments,omitempty"`
	Output    *string         `json:"output,omitempty"`
}

// inputItems are a request's input as the Responses API's items, with ids
// made from the response's id and their position.
func inputItems(id string, input []chat.Message) []listedItem {
	var out []listedItem
	for i, m := range input {
		itemID := fmt.Sprintf("item_%s_%d", id, i)
		switch {
		case m.Role == chat.RoleTool:
			text := m.Content
			out = append(out, listedItem{Type: "function_call_output", ID: itemID, Status: "completed", CallID: m.ToolCallID, Output: &text})
		case len(m.ToolCalls) > 0:
			for j, tc := range m.ToolCalls {
				args := tc.Arguments
				out = append(out, listedItem{Type: "function_call", ID: fmt.Sprintf("%s_%d", itemID, j), Status: "completed", CallID: tc.ID, Name: tc.Name, Arguments: &args})
			}
		default:
			part := "input_text"
			if m.Role == chat.RoleAssistant {
				part = "output_text"
			}
			out = append(out, listedItem{Type: "message", ID: itemID, Status: "completed", Role: m.Role,
				Content: []listedContent{{Type: part, Text: m.Content}}})
		}
	}
	return out
}

// listedContent is a message's text part.
type listedContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// listInputItems serves GET /v1/responses/{id}/input_items: order (desc,
// the default, or asc), limit (1-100, default 20), after (an item id).
func (s *Server) listInputItems(c echo.Context) error {
	id := c.Param("id")
	r, ok := s.responses.get(who(c).tenant, id)
	if !ok {
		return newError(http.StatusNotFound, typeInvalidRequest, "response_id", "not_found", "Response with id %q not found.", id)
	}
	items := inputItems(id, r.input)
	switch order := c.QueryParam("order"); order {
	case "", "desc":
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
		}
	case "asc":
	default:
		return invalid("order", "invalid_value", "order must be asc or desc, got %q.", order)
	}
	limit := 20
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return invalid("limit", "invalid_value", "limit must be an integer from 1 to 100, got %q.", v)
		}
		limit = n
	}
	if after := c.QueryParam("after"); after != "" {
		found := false
		for i, it := range items {
			if it.ID == after {
				items, found = items[i+1:], true
				break
			}
		}
		if !found {
			return invalid("after", "invalid_value", "after names no input item of response %q: %q.", id, after)
		}
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	list := map[string]any{"object": "list", "data": items, "has_more": more, "first_id": nil, "last_id": nil}
	if len(items) > 0 {
		list["first_id"], list["last_id"] = items[0].ID, items[len(items)-1].ID
	} else {
		list["data"] = []listedItem{}
	}
	return c.JSON(http.StatusOK, list)
}
