package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/runtime"
)

// APIError is OpenAI's error object: {"error": {"message", "type", "param",
// "code"}} with an HTTP status.
type APIError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
	// RetryAfter, when positive, is sent as the Retry-After header (whole
	// seconds, rounded up).
	RetryAfter time.Duration `json:"-"`
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

type errorBody struct {
	Error *APIError `json:"error"`
}

// Error types, as OpenAI names them.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuth           = "authentication_error"
	typeNotFound       = "not_found_error"
	typeServer         = "server_error"
	typeUnavailable    = "service_unavailable"
	typeConflict       = "conflict_error"
	typePermission     = "permission_error"
	typeRateLimit      = "rate_limit_error"
)

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// newError builds an APIError.
func newError(status int, typ, param, code, format string, args ...any) *APIError {
	return &APIError{Status: status, Message: fmt.Sprintf(format, args...), Type: typ, Param: strp(param), Code: strp(code)}
}

func invalid(param, code, format string, args ...any) *APIError {
	return newError(http.StatusBadRequest, typeInvalidRequest, param, code, format, args...)
}

// fromRuntime maps a runtime error to its HTTP form.
func fromRuntime(err error) *APIError {
	e := runtime.AsError(err)
	status, typ := http.StatusInternalServerError, typeServer
	switch e.Kind {
	case runtime.ErrInvalid, runtime.ErrContextLength:
		status, typ = http.StatusBadRequest, typeInvalidRequest
	case runtime.ErrNotFound:
		status, typ = http.StatusNotFound, typeInvalidRequest
	case runtime.ErrToolLoop:
		status, typ = http.StatusUnprocessableEntity, typeInvalidRequest
	case runtime.ErrUnavailable:
		status, typ = http.StatusServiceUnavailable, typeUnavailable
	case runtime.ErrCancelled:
		status, typ = 499, typeInvalidRequest
	case runtime.ErrConflict:
		status, typ = http.StatusConflict, typeConflict
	case runtime.ErrRateLimited:
		status, typ = http.StatusTooManyRequests, typeRateLimit
	case runtime.ErrBadGateway:
		status, typ = http.StatusBadGateway, typeServer
	}
	return &APIError{Status: status, Message: e.Msg, Type: typ, Param: strp(e.Param), Code: strp(e.Code), RetryAfter: e.RetryAfter}
}

// writeError sends err as OpenAI error JSON.
func writeError(c echo.Context, err *APIError) error {
	if c.Response().Committed {
		return nil
	}
	setRetryAfter(c, err)
	return c.JSON(err.Status, errorBody{Error: err})
}

// setRetryAfter sets the Retry-After header of a rate-limited answer.
func setRetryAfter(c echo.Context, err *APIError) {
	if err.RetryAfter > 0 {
		secs := int64(math.Ceil(err.RetryAfter.Seconds()))
		c.Response().Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
	}
}

// errorHandler turns every error a handler or echo returns into OpenAI's
// error JSON.
func errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var ae *APIError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &he):
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			msg = m
		}
		typ := typeInvalidRequest
		switch {
		case he.Code == http.StatusNotFound:
			msg = fmt.Sprintf("Unknown request URL: %s %s.", c.Request().Method, c.Request().URL.Path)
			typ = typeNotFound
		case he.Code == http.StatusMethodNotAllowed:
			msg = fmt.Sprintf("Method %s is not allowed on %s.", c.Request().Method, c.Request().URL.Path)
		case he.Code >= 500:
			typ = typeServer
		}
		ae = &APIError{Status: he.Code, Message: msg, Type: typ}
	default:
		ae = fromRuntime(err)
	}
	setRetryAfter(c, ae)
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(ae.Status)
		return
	}
	_ = c.JSON(ae.Status, errorBody{Error: ae})
}
