package tools

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"
)

// Server-wide maxima of webhook tools when WebhookLimits leaves them 0.
const (
	DefaultWebhookMaxTimeout       = 5 * time.Minute
	DefaultWebhookMaxResponseBytes = 1 << 20
)

// ErrOverLimit is wrapped by the error of a webhook registration that asks
// for more than the server's maxima.
var ErrOverLimit = errors.New("above this server's maximum")

// WebhookLimits are a server's maxima for every webhook tool it registers
// (flags --webhook-max-timeout and --webhook-max-response-bytes).
type WebhookLimits struct {
	// MaxTimeout bounds a webhook tool's timeout: a registration asking for
	// more is refused, and no call runs longer, whatever the executor's
	// default timeout (0: DefaultWebhookMaxTimeout).
	MaxTimeout time.Duration
	// MaxResponseBytes bounds the response read from a webhook. A larger
	// response is an error result naming the tool and the cap, not a cut
	// one: a cut JSON answer does not parse, and a cut text answer reads as
	// a whole one to the model; the tool server is the one to fix
	// (0: DefaultWebhookMaxResponseBytes).
	MaxResponseBytes int64
}

// Effective returns l with its zero fields set to the defaults.
func (l WebhookLimits) Effective() WebhookLimits {
	if l.MaxTimeout == 0 {
		l.MaxTimeout = DefaultWebhookMaxTimeout
	}
	if l.MaxResponseBytes == 0 {
		l.MaxResponseBytes = DefaultWebhookMaxResponseBytes
	}
	return l
}

// Validate refuses negative maxima.
func (l WebhookLimits) Validate() error {
	if l.MaxTimeout < 0 || l.MaxResponseBytes < 0 {
		return fmt.Errorf("webhook limits must not be negative (max timeout %v, max response bytes %d)", l.MaxTimeout, l.MaxResponseBytes)
	}
	return nil
}

// TimeoutFromSeconds converts a registration's timeout_s to a duration
// after checking it: not negative, not NaN, and not above MaxTimeout. The
// error (wrapping ErrOverLimit when too long) names the maximum, e.g.
// "timeout 600s is above this server's maximum of 300s"; 0 stays 0 (the
// executor's default, itself capped by MaxTimeout at call time).
func (l WebhookLimits) TimeoutFromSeconds(s float64) (time.Duration, error) {
	max := l.Effective().MaxTimeout
	switch {
	case math.IsNaN(s) || s < 0:
		return 0, fmt.Errorf("timeout %vs must be a number of seconds, 0 or more", s)
	case s > max.Seconds():
		return 0, fmt.Errorf("timeout %vs is %w of %vs", s, ErrOverLimit, max.Seconds())
	}
	return time.Duration(s * float64(time.Second)), nil
}

// WebhookEgress is what a server gives every webhook tool it registers:
// the dial policy (checked on the URL at registration and on every
// connection), the one client that enforces it, the maxima, and the log
// that gets the addresses and exact causes callers are not told. Build it
// once with NewWebhookEgress and share it: the tools then share the
// client's connection pool.
type WebhookEgress struct {
	Policy DialPolicy
	Limits WebhookLimits // with defaults filled
	Client *http.Client  // NewEgressClient(Policy)
	Logger *slog.Logger
}

// NewWebhookEgress builds a WebhookEgress. log nil is slog.Default().
func NewWebhookEgress(p DialPolicy, l WebhookLimits, log *slog.Logger, opts ...EgressOption) (*WebhookEgress, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &WebhookEgress{Policy: p, Limits: l.Effective(), Client: NewEgressClient(p, opts...), Logger: log}, nil
}

// egress returns the egress spec's calls go through, every field set:
// spec.Egress's, or OpenDialPolicy with default limits; spec.Client
// replaces its client.
func (spec WebhookSpec) egress() (WebhookEgress, error) {
	eg := WebhookEgress{Policy: OpenDialPolicy()}
	if spec.Egress != nil {
		eg = *spec.Egress
	}
	if err := eg.Limits.Validate(); err != nil {
		return eg, err
	}
	eg.Limits = eg.Limits.Effective()
	if spec.Client != nil {
		eg.Client = spec.Client
	}
	if eg.Client == nil {
		eg.Client = NewEgressClient(eg.Policy)
	}
	if eg.Logger == nil {
		eg.Logger = slog.Default()
	}
	return eg, nil
}
