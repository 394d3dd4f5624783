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

// DefaultWebhookMaxResponseBytes bounds how much of a webhook's response is
// read.
const DefaultWebhookMaxResponseBytes = 1 << 20

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
	// Timeout bounds one call, connection included (0: executor default).
	Timeout time.Duration
	// MaxConcurrency, Idempotent and CacheTTL are as in Tool.
	MaxConcurrency int
	Idempotent     bool
	CacheTTL       time.Duration
	// MaxResponseBytes bounds how much of the response is read (0:
	// DefaultWebhookMaxResponseBytes); the executor's output cap still
	// applies after it.
	MaxResponseBytes int64
	// Header is added to every request (e.g. an API key of the tool server).
	Header http.Header
	// Client sends the requests (nil: a client without redirects).
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

// NewWebhookTool builds a tool that POSTs each call to spec.URL as JSON
// {"tool": name, "call_id": id, "arguments": {...}, "timestamp": unix}
// with the headers X-Pitstop-Signature (sha256=<hex HMAC-SHA256 of the body
// with the secret>) and X-Pitstop-Timestamp. A 2xx answer is the result:
// JSON {"content": "..."} or plain text; JSON {"error": "..."} is an error
// result. A non-2xx status, a timeout or an unreachable server is an error
// result.
func NewWebhookTool(spec WebhookSpec) (*Tool, error) {
	u, err := url.Parse(spec.URL)
	if err != nil {
		return nil, fmt.Errorf("%w %q: webhook URL: %v", ErrInvalidTool, spec.Name, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w %q: webhook URL %q must be an absolute http or https URL", ErrInvalidTool, spec.Name, spec.URL)
	}
	if spec.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("%w %q: negative max response bytes", ErrInvalidTool, spec.Name)
	}
	limit := spec.MaxResponseBytes
	if limit == 0 {
		limit = DefaultWebhookMaxResponseBytes
	}
	client := spec.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect would drop the POST body
		}}
	}
	secret := append([]byte(nil), spec.Secret...)
	header := spec.Header.Clone()
	target := u.String()
	name := spec.Name

	h := func(ctx context.Context, args json.RawMessage) (string, error) {
		ts := time.Now().Unix()
		body, err := json.Marshal(webhookRequest{Tool: name, CallID: CallIDFromContext(ctx), Arguments: args, Timestamp: ts})
		if err != nil {
			return "", fmt.Errorf("encoding webhook request: %w", err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
		if err != nil {
			return "", fmt.Errorf("webhook request: %w", err)
		}
		for k, vs := range header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/plain")
		req.Header.Set(TimestampHeader, strconv.FormatInt(ts, 10))
		if len(secret) > 0 {
			req.Header.Set(SignatureHeader, Sign(secret, body))
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("webhook unreachable: %w", redactURLError(err))
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("reading webhook response: %w", err)
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return "", fmt.Errorf("webhook returned HTTP %d%s", resp.StatusCode, snippet(data))
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
	return New(spec.Name, spec.Description, spec.Parameters, h,
		WithTimeout(spec.Timeout), WithMaxConcurrency(spec.MaxConcurrency),
		func(t *Tool) { t.Idempotent, t.CacheTTL = spec.Idempotent, spec.CacheTTL })
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
