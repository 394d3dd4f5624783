package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime"
)

// backgroundResponse answers a background: true request at once with the
// response queued, and finishes it on its own goroutine: GET polls it
// (in_progress until its final object is stored), POST .../cancel ends it.
func (s *Server) backgroundResponse(c echo.Context, call *runtime.Call, obj *responseObject, p *ResponsesParams, conversation []chat.Message, program string, received time.Time) error {
	tenant := who(c).tenant
	running := *obj
	running.Status = "in_progress"
	done := make(chan struct{})
	s.responses.put(tenant, obj.ID, &storedResponse{obj: &running, program: program, input: p.Input, call: call, done: done})
	go func() {
		defer close(done)
		res, err := call.Wait(context.Background())
		if err != nil {
			return
		}
		s.callDone(call, res, received, false)
		final := *obj
		switch {
		case res.Err != nil && runtime.AsError(res.Err).Kind == runtime.ErrCancelled:
			final.Status = "cancelled"
			final.Output = []outputItem{}
		case res.Err != nil:
			final.Status, final.Error = "failed", fromRuntime(res.Err)
			final.Output = []outputItem{}
		default:
			finishResponse(&final, res)
			s.storeResponse(tenant, p, &final, conversation, res, program)
			return
		}
		s.responses.put(tenant, obj.ID, &storedResponse{obj: &final, program: program, input: p.Input})
	}()
	queued := *obj
	queued.Status = "queued"
	return c.JSON(http.StatusOK, &queued)
}

// cancelResponse serves POST /v1/responses/{id}/cancel: only a background
// response can be cancelled; one that has finished is returned as it is.
func (s *Server) cancelResponse(c echo.Context) error {
	tenant, id := who(c).tenant, c.Param("id")
	r, ok := s.responses.get(tenant, id)
	if !ok {
		return newError(http.StatusNotFound, typeInvalidRequest, "response_id", "not_found", "Response with id %q not found.", id)
	}
	if !r.obj.Background {
		return invalid("response_id", "invalid_value", "Only responses created with background: true can be cancelled; %q was not.", id)
	}
	if r.call != nil {
		r.call.Cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
		}
		if r, ok = s.responses.get(tenant, id); !ok {
			return newError(http.StatusNotFound, typeInvalidRequest, "response_id", "not_found", "Response with id %q not found.", id)
		}
	}
	return c.JSON(http.StatusOK, r.obj)
}
