package tools

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Headers of a webhook tool request.
const (
	SignatureHeader = "X-Pitstop-Signature" // "sha256=<hex HMAC-SHA256 of the body>"
	TimestampHeader = "X-Pitstop-Timestamp" // Unix seconds, also in the signed body
)

// WebhookSpec describes a tool served by an HTTP endpoint (a tool author's
// server).
type WebhookSpec struct {
	Name        string
	Description string
	// URL receives a POST per call (http or https).
	URL string
	// Parameters is the JSON Schema of the arguments (see Tool.Parameters).
	Parameters json.RawMessage
	// Secret signs each request body (HMAC-SHA256); empty sends no signature.
	Secret []byte
	// Timeout bounds one call, connection included (0: executor default);
	// it must not exceed the egress's Limits.MaxTimeout.
	Timeout time.Duration
	// MaxConcurrency, Idempotent and CacheTTL are as in Tool.
	MaxConcurrency int
	Idempotent     bool
	CacheTTL       time.Duration
	// MaxResponseBytes bounds how much of the response is read (0: the
	// egress's Limits.MaxResponseBytes, which it must not exceed); the
	// executor's output cap still applies after it.
	MaxResponseBytes int64
	// Header is added to every request (e.g. an API key of the tool server).
	Header http.Header
	// Egress is the server's policy, client, maxima and log (nil: a client
	// of its own under OpenDialPolicy, default limits, slog.Default()).
	Egress *WebhookEgress
	// Client, when set, sends the requests instead of Egress.Client; it must
	// enforce the same policy (build it with NewEgressClient).
	Client *http.Client
}

// webhookRequest is the body POSTed to a webhook tool.
type webhookRequest struct {
	Tool      string          `json:"tool"`
	CallID    string          `json:"call_id"`
	Arguments json.RawMessage `json:"arguments"`
	Timestamp int64           `json:"timestamp"`
}

// webhookResponse is the JSON form of a webhook's answer. A plain-text body
// is the content itself.
type webhookResponse struct {
	Content *string `json:"content"`
	Error   string  `json:"error"`
}

// webhookTargetError refuses a webhook URL at registration. Its text says
// what kind of host was refused, not which: the address stays in Cause.
type webhookTargetError struct {
	tool, reason string
	cause        error
}

func (e *webhookTargetError) Error() string {
	return fmt.Sprintf("%v %q: the webhook URL's host is %s", ErrInvalidTool, e.tool, e.reason)
}

func (e *webhookTargetError) Unwrap() []error { return []error{ErrInvalidTool, e.cause} }

// NewWebhookTool builds a tool that POSTs each call to spec.URL as JSON
// {"tool": name, "call_id": id, "arguments": {...}, "timestamp": unix}
// with the headers X-Pitstop-Signature (sha256=<hex HMAC-SHA256 of the body
// with the secret>) and X-Pitstop-Timestamp. A 2xx answer is the result:
// JSON {"content": "..."} or plain text; JSON {"error": "..."} is an error
// result.
//
// The URL's host is checked now (DialPolicy.CheckHost: a refused IP, a
// numeric host in a non-canonical form) and every connection again at dial
// time. A refused address, an unreachable server, a timeout, a non-2xx
// status or a response over the cap is an error result, a *WebhookError
// that names the tool and the kind of failure but never the target; the
// target and the exact cause go to the egress's log.
func NewWebhookTool(spec WebhookSpec) (*Tool, error) {
	u, err := url.Parse(spec.URL)
	if err != nil {
		return nil, fmt.Errorf("%w %q: webhook URL: %v", ErrInvalidTool, spec.Name, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w %q: webhook URL %q must be an absolute http or https URL", ErrInvalidTool, spec.Name, spec.URL)
	}
	eg, err := spec.egress()
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidTool, spec.Name, err)
	}
	switch limits := eg.Limits; {
	case spec.MaxResponseBytes < 0:
		return nil, fmt.Errorf("%w %q: negative max response bytes", ErrInvalidTool, spec.Name)
	case spec.MaxResponseBytes > limits.MaxResponseBytes:
		return nil, fmt.Errorf("%w %q: max response bytes %d is %w of %d", ErrInvalidTool, spec.Name, spec.MaxResponseBytes, ErrOverLimit, limits.MaxResponseBytes)
	case spec.Timeout > limits.MaxTimeout:
		return nil, fmt.Errorf("%w %q: timeout %v is %w of %v", ErrInvalidTool, spec.Name, spec.Timeout, ErrOverLimit, limits.MaxTimeout)
	}
	if err := eg.Policy.CheckHost(u.Hostname()); err != nil {
		eg.Logger.Warn("webhook tool refused at registration", "tool", spec.Name, "target", logURL(u), "err", err)
		return nil, &webhookTargetError{tool: spec.Name, reason: refusalReason(err), cause: err}
	}
	limit := spec.MaxResponseBytes
	if limit == 0 {
		limit = eg.Limits.MaxResponseBytes
	}
	w := &webhookCaller{
		name: spec.Name, target: u.String(), logTarget: logURL(u),
		secret: append([]byte(nil), spec.Secret...), header: spec.Header.Clone(),
		client: eg.Client, limit: limit, maxTimeout: eg.Limits.MaxTimeout, log: eg.Logger,
	}
	return New(spec.Name, spec.Description, spec.Parameters, w.call,
		WithTimeout(spec.Timeout), WithMaxConcurrency(spec.MaxConcurrency),
		func(t *Tool) { t.Idempotent, t.CacheTTL = spec.Idempotent, spec.CacheTTL })
}

// webhookCaller makes the calls of one webhook tool.
type webhookCaller struct {
	name, target, logTarget string
	secret                  []byte
	header                  http.Header
	client                  *http.Client
	limit                   int64
	maxTimeout              time.Duration
	log                     *slog.Logger
}

// call is the tool's handler.
func (w *webhookCaller) call(ctx context.Context, args json.RawMessage) (string, error) {
	ts := time.Now().Unix()
	body, err := json.Marshal(webhookRequest{Tool: w.name, CallID: CallIDFromContext(ctx), Arguments: args, Timestamp: ts})
	if err != nil {
		return "", fmt.Errorf("encoding webhook request: %w", err)
	}
	// The server's maximum holds even when the executor's default timeout
	// is longer; when ctx ends first, the executor reports it.
	cctx, cancel := context.WithTimeout(ctx, w.maxTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, w.target, bytes.NewReader(body))
	if err != nil {
		return "", w.fail(ctx, &WebhookError{Failure: EgressUnreachable, Cause: err})
	}
	for k, vs := range w.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/plain")
	req.Header.Set(TimestampHeader, strconv.FormatInt(ts, 10))
	if len(w.secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(w.secret, body))
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return "", w.transportFailure(ctx, cctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, w.limit+1))
	if err != nil {
		return "", w.transportFailure(ctx, cctx, err)
	}
	if int64(len(data)) > w.limit {
		return "", w.fail(ctx, &WebhookError{Failure: EgressTooLarge, Limit: w.limit, Status: resp.StatusCode})
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &WebhookError{Failure: EgressHTTPStatus, Status: resp.StatusCode}
		if resp.StatusCode >= 400 {
			// A redirect's body is a link to its Location: not shown.
			e.Body = snippet(data)
		}
		return "", w.fail(ctx, e)
	}
	if isJSONContent(resp.Header.Get("Content-Type"), data) {
		var wr webhookResponse
		if err := json.Unmarshal(data, &wr); err == nil {
			switch {
			case wr.Error != "":
				return "", errors.New(wr.Error)
			case wr.Content != nil:
				return *wr.Content, nil
			}
		}
	}
	return string(data), nil
}

// transportFailure is the error of a request that got no complete answer.
// When the caller's context ended, its error is returned as it is: the
// executor reports the timeout or the cancellation itself.
func (w *webhookCaller) transportFailure(ctx, cctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e := &WebhookError{Failure: classifyEgress(err), Cause: redactURLError(err)}
	if cctx.Err() != nil {
		e.Failure, e.After = EgressTimedOut, w.maxTimeout
	}
	return w.fail(ctx, e)
}

// fail completes e, logs the target and the cause, and returns e.
func (w *webhookCaller) fail(ctx context.Context, e *WebhookError) error {
	e.Tool = w.name
	level := slog.LevelInfo
	if e.Failure == EgressRefused || e.Failure == EgressRedirectRefused {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("tool", w.name), slog.String("call_id", CallIDFromContext(ctx)),
		slog.String("target", w.logTarget), slog.String("failure", e.Failure.String())}
	if e.Status != 0 {
		attrs = append(attrs, slog.Int("status", e.Status))
	}
	if e.Cause != nil {
		attrs = append(attrs, slog.String("err", e.Cause.Error()))
	}
	w.log.LogAttrs(ctx, level, "webhook call failed", attrs...)
	return e
}

// isJSONContent reports whether a response looks like a JSON object.
func isJSONContent(contentType string, data []byte) bool {
	if strings.Contains(strings.ToLower(contentType), "json") {
		return true
	}
	return bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
}

// snippet returns the start of an error body for an error message.
func snippet(data []byte) string {
	s := strings.TrimSpace(string(data))
	if s == "" {
		return ""
	}
	const max = 200
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return ": " + s
}

// redactURLError drops the URL from a *url.Error: the model needs to know
// the server is down, not where it lives (it may carry a key in its query).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Sign returns the X-Pitstop-Signature header value for body:
// "sha256=" + hex(HMAC-SHA256(secret, body)).
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature reports whether header (an X-Pitstop-Signature value) is
// the signature of body with secret. It compares in constant time. Tool
// authors call it on the raw request body before decoding it; an empty
// secret never verifies.
func VerifySignature(secret, body []byte, header string) bool {
	if len(secret) == 0 {
		return false
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(header), "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}
