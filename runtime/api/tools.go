package api

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/tools"
)

// toolInfo is one entry of GET /v1/tools: the OpenAI definition and the
// runtime's duration statistics of the tool.
type toolInfo struct {
	tools.Definition
	Stats *toolStats `json:"stats,omitempty"`
}

type toolStats struct {
	Count      int64   `json:"count"`
	EWMAS      float64 `json:"ewma_s"`
	PredictedS float64 `json:"predicted_s"`
	P50S       float64 `json:"p50_s,omitempty"`
	P90S       float64 `json:"p90_s,omitempty"`
	DeclaredS  float64 `json:"declared_s,omitempty"`
}

func (s *Server) listTools(c echo.Context) error {
	d := s.rt.Durations()
	var out []toolInfo
	for _, def := range s.rt.Tools().OpenAIDefinitions() {
		ti := toolInfo{Definition: def}
		if st, ok := d.Stats(def.Function.Name); ok {
			ts := &toolStats{Count: st.Count, EWMAS: st.EWMA, DeclaredS: st.Prior, PredictedS: d.PredictDuration(def.Function.Name)}
			if v, ok := d.Quantile(def.Function.Name, 0.5); ok {
				ts.P50S = v
			}
			if v, ok := d.Quantile(def.Function.Name, 0.9); ok {
				ts.P90S = v
			}
			ti.Stats = ts
		}
		out = append(out, ti)
	}
	if out == nil {
		out = []toolInfo{}
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": out})
}

// registerRequest is the body of POST /v1/tools: a webhook tool.
type registerRequest struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	URL         string          `json:"url"`
	Parameters  json.RawMessage `json:"parameters"`
	// Secret signs each call (HMAC-SHA256, header X-Pitstop-Signature).
	Secret         string            `json:"secret"`
	TimeoutS       float64           `json:"timeout_s"`
	MaxConcurrency int               `json:"max_concurrency"`
	Idempotent     bool              `json:"idempotent"`
	CacheTTLS      float64           `json:"cache_ttl_s"`
	ExpectedS      float64           `json:"expected_duration_s"`
	Headers        map[string]string `json:"headers"`
}

func (s *Server) registerTool(c echo.Context) error {
	if !s.cfg.AllowToolRegistration {
		return newError(http.StatusForbidden, typePermission, "", "tool_registration_disabled", "Registering tools at run time is disabled on this server.")
	}
	body, aerr := s.readBody(c)
	if aerr != nil {
		return aerr
	}
	var r registerRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return invalid("", "invalid_json", "We could not parse the JSON body of your request: %s", jsonErrorText(err))
	}
	switch {
	case r.URL == "":
		return invalid("url", "missing_required_parameter", "Missing required parameter: url.")
	case r.TimeoutS < 0 || r.CacheTTLS < 0 || r.ExpectedS < 0 || r.MaxConcurrency < 0:
		return invalid("", "invalid_value", "timeout_s, cache_ttl_s, expected_duration_s and max_concurrency must not be negative.")
	}
	spec := tools.WebhookSpec{
		Name: r.Name, Description: r.Description, URL: r.URL, Parameters: r.Parameters, Secret: []byte(r.Secret),
		Timeout: seconds(r.TimeoutS), MaxConcurrency: r.MaxConcurrency, Idempotent: r.Idempotent, CacheTTL: seconds(r.CacheTTLS),
		Client: s.webhookClient,
	}
	if len(r.Headers) > 0 {
		spec.Header = http.Header{}
		for k, v := range r.Headers {
			spec.Header.Set(k, v)
		}
	}
	s.regMu.Lock()
	err := s.rt.RegisterWebhook(spec, r.ExpectedS)
	s.regMu.Unlock()
	if err != nil {
		return fromRuntime(err)
	}
	t, _ := s.rt.Tools().Get(r.Name)
	return c.JSON(http.StatusCreated, toolInfo{Definition: t.Definition()})
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// invokeRequest is the body of POST /v1/tools/{name}/invoke.
type invokeRequest struct {
	// Arguments: a JSON object, or a string holding one (OpenAI's form).
	Arguments json.RawMessage `json:"arguments"`
	CallID    string          `json:"call_id"`
}

type invokeResponse struct {
	Tool       string  `json:"tool"`
	CallID     string  `json:"call_id,omitempty"`
	Program    string  `json:"program,omitempty"`
	Content    string  `json:"content"`
	IsError    bool    `json:"is_error"`
	Truncated  bool    `json:"truncated,omitempty"`
	Cached     bool    `json:"cached,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

func (s *Server) invokeTool(c echo.Context) error {
	body, aerr := s.readBody(c)
	if aerr != nil {
		return aerr
	}
	var r invokeRequest
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &r); err != nil {
			return invalid("", "invalid_json", "We could not parse the JSON body of your request: %s", jsonErrorText(err))
		}
	}
	args, aerr := decodeArguments("arguments", r.Arguments)
	if aerr != nil {
		return aerr
	}
	program, thread, _, aerr := programHeaders(c)
	if aerr != nil {
		return aerr
	}
	name := c.Param("name")
	res, err := s.rt.Invoke(c.Request().Context(), invokeRequestFor(program, thread, name, args, r.CallID))
	if err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, invokeResponse{Tool: name, CallID: r.CallID, Program: program, Content: res.Content,
		IsError: res.IsError, Truncated: res.Truncated, Cached: res.Cached, DurationMS: float64(res.Duration().Microseconds()) / 1000})
}

// webhookClient is an HTTP client whose connections obey a dial policy.
func webhookClient(p tools.DialPolicy) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: p.Control}
	return &http.Client{
		Transport: &http.Transport{Proxy: nil, DialContext: d.DialContext, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect would drop the POST body
		},
	}
}

func invokeRequestFor(program, thread, name, args, callID string) runtime.InvokeRequest {
	return runtime.InvokeRequest{Program: program, Thread: thread, Tool: name, Arguments: args, CallID: callID}
}
