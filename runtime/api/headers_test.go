package api

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// writeJSON writes what c.JSON writes, headers included, for a request
// with and without ?pretty.
func TestWriteJSONIsEchoJSON(t *testing.T) {
	v := chatCompletion{ID: "chatcmpl-1", Object: "chat.completion", Model: "m<&>", Choices: []choice{{FinishReason: "stop"}}}
	e := echo.New()
	for _, target := range []string{"/v1/chat/completions", "/v1/chat/completions?pretty"} {
		run := func(write func(echo.Context) error) *httptest.ResponseRecorder {
			w := httptest.NewRecorder()
			if err := write(e.NewContext(httptest.NewRequest(http.MethodPost, target, nil), w)); err != nil {
				t.Fatal(err)
			}
			return w
		}
		want := run(func(c echo.Context) error { return c.JSON(http.StatusOK, v) })
		got := run(func(c echo.Context) error { return writeJSON(c, http.StatusOK, v) })
		if got.Body.String() != want.Body.String() || got.Code != want.Code {
			t.Errorf("%s: writeJSON wrote %d %q, c.JSON %d %q", target, got.Code, got.Body, want.Code, want.Body)
		}
		if g, w := got.Header().Get(echo.HeaderContentType), want.Header().Get(echo.HeaderContentType); g != w {
			t.Errorf("%s: Content-Type %q, c.JSON's %q", target, g, w)
		}
	}
}

// A header set from a fixed value and then added to leaves the fixed
// value as it was.
func TestSetFixedValueIsNotShared(t *testing.T) {
	h := http.Header{}
	setFixed(h, "Cache-Control", valueNoCache)
	h.Add("Cache-Control", "no-store")
	if len(valueNoCache) != 1 || valueNoCache[0] != "no-cache" || len(h["Cache-Control"]) != 2 {
		t.Fatalf("after Add: fixed value %q, header %q", valueNoCache, h["Cache-Control"])
	}
	h["Cache-Control"][0] = "changed"
	if valueNoCache[0] != "no-cache" {
		t.Fatalf("a write to the header changed the fixed value: %q", valueNoCache)
	}
}
