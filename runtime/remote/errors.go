package remote

import (
	"fmt"
	"time"
)

// ErrorKind says what went wrong with a generation, for the HTTP status it
// becomes.
type ErrorKind uint8

const (
	// ErrNoBackend: no backend is up (503 with Retry-After).
	ErrNoBackend ErrorKind = iota
	// ErrBadReply: a backend answered with something that is not an
	// OpenAI reply (502).
	ErrBadReply
	// ErrBackendFailed: the backend failed after part of the reply had
	// gone to the client, so the call could not move (502).
	ErrBackendFailed
	// ErrRejected: the backend refused the request as invalid (400): the
	// same request would fail anywhere.
	ErrRejected
)

// Error is a failed generation.
type Error struct {
	Kind    ErrorKind
	Backend string
	Msg     string
	// RetryAfter, for ErrNoBackend, is when a backend may be up again.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Backend == "" {
		return e.Msg
	}
	return fmt.Sprintf("backend %s: %s", e.Backend, e.Msg)
}

// failure is one attempt's error on one backend: down says the backend
// itself failed (connection, timeout, 5xx), so it is marked down and the
// call may move; otherwise the reply was bad or the request refused.
type failure struct {
	down     bool
	rejected bool
	status   int
	msg      string
}

func (f *failure) Error() string { return f.msg }
