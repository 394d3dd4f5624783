package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// EgressFailure is the kind of failure of an outgoing tool request: what a
// caller or a model is told, where the server log gets the address and the
// exact cause.
type EgressFailure int

// Kinds of EgressFailure.
const (
	EgressRefused         EgressFailure = iota + 1 // the dial policy refused the address
	EgressRedirectRefused                          // a redirect that was not followed
	EgressUnreachable                              // no such host, connection refused, TLS failure, …
	EgressTimedOut                                 // a dial, TLS or server-maximum timeout
	EgressHTTPStatus                               // a status outside 2xx
	EgressTooLarge                                 // a response over the size cap
)

func (f EgressFailure) String() string {
	switch f {
	case EgressRefused:
		return "refused"
	case EgressRedirectRefused:
		return "redirect_refused"
	case EgressUnreachable:
		return "unreachable"
	case EgressTimedOut:
		return "timed_out"
	case EgressHTTPStatus:
		return "http_status"
	case EgressTooLarge:
		return "too_large"
	}
	return fmt.Sprintf("EgressFailure(%d)", int(f))
}

// classifyEgress says what kind of failure err (from an egress client's
// Do, or from reading its response) is.
func classifyEgress(err error) EgressFailure {
	var ne net.Error
	switch {
	case errors.Is(err, ErrAddressRefused):
		return EgressRefused
	case errors.Is(err, ErrRedirectRefused):
		return EgressRedirectRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return EgressTimedOut
	}
	return EgressUnreachable
}

// WebhookError is the failure of one webhook call as callers and models
// see it: the tool and the kind of failure, never the target's host,
// address, port or URL. Cause holds the exact error (with the address) for
// the server log; the webhook tool logs it.
type WebhookError struct {
	Tool    string
	Failure EgressFailure
	Status  int           // EgressHTTPStatus: the status code
	Body    string        // EgressHTTPStatus: the start of the tool server's answer
	Limit   int64         // EgressTooLarge: the cap in bytes
	After   time.Duration // EgressTimedOut by the server's maximum timeout
	Cause   error
}

func (e *WebhookError) Error() string {
	what := fmt.Sprintf("webhook of tool %q ", e.Tool)
	switch e.Failure {
	case EgressRefused:
		return what + "refused by the egress policy"
	case EgressRedirectRefused:
		return what + "answered with a redirect that was not followed"
	case EgressTimedOut:
		if e.After > 0 {
			return what + fmt.Sprintf("timed out after the server's maximum of %v", e.After)
		}
		return what + "timed out"
	case EgressHTTPStatus:
		return what + fmt.Sprintf("returned HTTP %d%s", e.Status, e.Body)
	case EgressTooLarge:
		return what + fmt.Sprintf("response larger than %d bytes", e.Limit)
	}
	return what + "unreachable"
}

func (e *WebhookError) Unwrap() error { return e.Cause }

// refusalReason says why a host was refused, without the host: "a
// loopback address, which this server's egress policy refuses", "an IPv4
// address in a non-canonical form…".
func refusalReason(err error) string {
	var ae *AddressRefusedError
	var he *HostRefusedError
	switch {
	case errors.As(err, &ae):
		return ae.kind() + ", which this server's egress policy refuses"
	case errors.As(err, &he):
		return he.Reason
	}
	return "refused"
}
