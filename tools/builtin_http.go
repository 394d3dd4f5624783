package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of http_get.
const (
	DefaultHTTPGetMaxBytes = 256 << 10
	DefaultHTTPGetTimeout  = 10 * time.Second
)

// HTTPGetConfig enables and restricts the http_get tool.
type HTTPGetConfig struct {
	// AllowedHosts lists the host names (or IP literals) http_get may
	// fetch from: "example.com" is that host only, "*.example.com" its
	// subdomains. Required: an empty list is a configuration error.
	AllowedHosts []string
	// Policy says which resolved addresses may be dialled; by default only
	// public ones (see DialPolicy). Redirects are followed as
	// NewEgressClient says, only to allowed hosts, and checked the same way.
	Policy DialPolicy
	// MaxBytes bounds the body read (0: DefaultHTTPGetMaxBytes).
	MaxBytes int64
	// Timeout bounds one fetch (0: DefaultHTTPGetTimeout).
	Timeout time.Duration
	// UserAgent is sent with each request (empty: "pitstop-http_get/1").
	UserAgent string
}

type httpGetArgs struct {
	URL string `json:"url" jsonschema:"description=Absolute http or https URL to fetch,minLength=1"`
}

// hostAllowed reports whether host matches one of the patterns.
func hostAllowed(patterns []string, host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, p := range patterns {
		p = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(p)), ".")
		p = strings.TrimSuffix(strings.TrimPrefix(p, "["), "]")
		if suffix, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == p {
			return true
		}
	}
	return false
}

func checkFetchURL(patterns []string, u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("only http and https URLs can be fetched, not %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return errors.New("the URL has no host")
	}
	if !hostAllowed(patterns, u.Hostname()) {
		return fmt.Errorf("host %q is not in the allowed list (%s)", u.Hostname(), strings.Join(patterns, ", "))
	}
	return nil
}

// NewHTTPGetTool returns the http_get tool for cfg.
func NewHTTPGetTool(cfg HTTPGetConfig) (*Tool, error) {
	var patterns []string
	for _, h := range cfg.AllowedHosts {
		if h = strings.TrimSpace(h); h != "" {
			patterns = append(patterns, h)
		}
	}
	if len(patterns) == 0 {
		return nil, fmt.Errorf("%w %q: needs at least one allowed host", ErrInvalidTool, HTTPGetTool)
	}
	if cfg.MaxBytes < 0 || cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w %q: negative size cap or timeout", ErrInvalidTool, HTTPGetTool)
	}
	maxBytes := cfg.MaxBytes
	if maxBytes == 0 {
		maxBytes = DefaultHTTPGetMaxBytes
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultHTTPGetTimeout
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = "pitstop-http_get/1"
	}
	client := NewEgressClient(cfg.Policy, WithEgressDialTimeout(timeout),
		WithEgressRedirectCheck(func(req *http.Request) error { return checkFetchURL(patterns, req.URL) }))
	return Func(HTTPGetTool,
		"Fetch a web page or API response by URL (HTTP GET) and return its text. Only these hosts are allowed: "+strings.Join(patterns, ", ")+".",
		func(ctx context.Context, a httpGetArgs) (string, error) {
			u, err := url.Parse(strings.TrimSpace(a.URL))
			if err != nil {
				return "", fmt.Errorf("invalid URL: %v", err)
			}
			if err := checkFetchURL(patterns, u); err != nil {
				return "", err
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				return "", fmt.Errorf("invalid URL: %v", err)
			}
			req.Header.Set("User-Agent", ua)
			req.Header.Set("Accept", "text/*, application/json, application/xml;q=0.9, */*;q=0.1")
			if err := cfg.Policy.CheckHost(u.Hostname()); err != nil {
				return "", fmt.Errorf("fetch refused: the host is %s", refusalReason(err))
			}
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				return "", fetchError(err)
			}
			defer resp.Body.Close()
			ct := resp.Header.Get("Content-Type")
			if !textual(ct) {
				return "", fmt.Errorf("HTTP %d with content type %q: not text, not returned", resp.StatusCode, ct)
			}
			body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
			if err != nil {
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				return "", fmt.Errorf("reading the response: %w", fetchError(err))
			}
			note := ""
			if int64(len(body)) > maxBytes {
				body = body[:maxBytes]
				note = fmt.Sprintf("\n…[truncated: response larger than %d bytes]", maxBytes)
			}
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				return "", fmt.Errorf("HTTP %d%s", resp.StatusCode, snippet(body))
			}
			return string(body) + note, nil
		}, WithTimeout(timeout))
}

// fetchError is what the model is told of a fetch that got no answer: the
// kind of failure and, for a refusal, the kind of address, never the
// address a name resolved to. A refused redirect says why (its host is
// the model's to see: it came in the page's answer).
func fetchError(err error) error {
	var rr *RedirectRefusedError
	var dns *net.DNSError
	switch classifyEgress(err) {
	case EgressRefused:
		return fmt.Errorf("fetch refused: the host is %s", refusalReason(err))
	case EgressRedirectRefused:
		if errors.As(err, &rr) {
			return fmt.Errorf("redirect refused: %w", rr.Reason)
		}
		return ErrRedirectRefused
	case EgressTimedOut:
		return errors.New("fetch timed out")
	}
	if errors.As(err, &dns) && dns.IsNotFound {
		return fmt.Errorf("fetch failed: no such host %q", dns.Name)
	}
	return errors.New("fetch failed: the server is unreachable")
}

// textual reports whether a content type is text a model can read.
func textual(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/x-www-form-urlencoded", mt == "application/yaml", mt == "application/x-yaml",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return false
}
