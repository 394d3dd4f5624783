package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// The values of the fixed headers a chat completion's answer carries,
// made once: http.Header.Set makes a one-string slice per call, four of
// them per streamed answer. Each slice is read-only and holds exactly one
// value (len = cap = 1), so a later Add to the same header appends to a
// copy, never to these.
var (
	valueJSON        = []string{echo.MIMEApplicationJSON}
	valueEventStream = []string{"text/event-stream; charset=utf-8"}
	valueNoCache     = []string{"no-cache"}
	valueKeepAlive   = []string{"keep-alive"}
	valueNo          = []string{"no"}
	valueZero        = []string{"0"}
)

// setFixed sets header key (in canonical form) to one of the values above.
func setFixed(h http.Header, key string, value []string) { h[key] = value[:1:1] }

// writeJSON is echo's c.JSON (the same serializer, the same bytes) with
// its Content-Type from valueJSON; with ?pretty or echo's debug mode it
// is c.JSON itself (an indented answer). c.JSON parses the query (a map
// per call) to look for ?pretty: most requests have none.
func writeJSON(c echo.Context, code int, v any) error {
	if c.Request().URL.RawQuery != "" || c.Echo().Debug {
		return c.JSON(code, v)
	}
	h := c.Response().Header()
	if len(h[echo.HeaderContentType]) == 0 {
		setFixed(h, echo.HeaderContentType, valueJSON)
	}
	return c.JSONPretty(code, v, "")
}
