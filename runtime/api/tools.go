package api

import (
	"bytes"
	"encoding/json"
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
	// Tenant is the tool's owner, for a tool registered by a tenant (shown
	// to its own keys and to admins; absent for server tools).
	Tenant string     `json:"tenant,omitempty"`
	Stats  *toolStats `json:"stats,omitempty"`
}

type toolStats struct {
	Count      int64   `json:"count"`
	EWMAS      float64 `json:"ewma_s"`
	PredictedS float64 `json:"predicted_s"`
	P50S       float64 `json:"p50_s,omitempty"`
	P90S       float64 `json:"p90_s,omitempty"`
	DeclaredS  float64 `json:"declared_s,omitempty"`
}

// listTools lists the tools the caller's calls may run: the server's and
// its tenant's own (an admin's: every tenant's).
func (s *Server) listTools(c echo.Context) error {
	p := who(c)
	var out []toolInfo
	for _, st := range s.rt.Tools().ListAll() {
		if st.Scope != "" && st.Scope != p.tenant && !p.admin {
			continue
		}
		out = append(out, s.toolInfo(st.Scope, st.Tool))
	}
	if out == nil {
		out = []toolInfo{}
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": out})
}

// toolInfo is a tool's listing entry with its duration statistics.
func (s *Server) toolInfo(scope string, t *tools.Tool) toolInfo {
	d := s.rt.Durations()
	key := tools.StatsKey(scope, t.Name)
	ti := toolInfo{Definition: t.Definition(), Tenant: scope}
	if st, ok := d.Stats(key); ok {
		ts := &toolStats{Count: st.Count, EWMAS: st.EWMA, DeclaredS: st.Prior, PredictedS: d.PredictDuration(key)}
		if v, ok := d.Quantile(key, 0.5); ok {
			ts.P50S = v
		}
		if v, ok := d.Quantile(key, 0.9); ok {
			ts.P90S = v
		}
		ti.Stats = ts
	}
	return ti
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

// registerTool registers a webhook tool in the caller's tenant (POST
// /v1/tools); a name the tenant already has is 409 (PUT replaces).
func (s *Server) registerTool(c echo.Context) error { return s.putTool(c, "", false) }

// replaceTool registers or replaces the caller's webhook tool of that name
// (PUT /v1/tools/{name}).
func (s *Server) replaceTool(c echo.Context) error { return s.putTool(c, c.Param("name"), true) }

func (s *Server) putTool(c echo.Context, name string, replace bool) error {
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
	if name != "" {
		if r.Name == "" {
			r.Name = name
		} else if r.Name != name {
			return invalid("name", "invalid_value", "The body names tool %q but the URL names %q.", r.Name, name)
		}
	}
	switch {
	case r.URL == "":
		return invalid("url", "missing_required_parameter", "Missing required parameter: url.")
	case r.CacheTTLS < 0 || r.ExpectedS < 0 || r.MaxConcurrency < 0:
		return invalid("", "invalid_value", "cache_ttl_s, expected_duration_s and max_concurrency must not be negative.")
	}
	timeout, err := s.webhooks.Limits.TimeoutFromSeconds(r.TimeoutS)
	if err != nil {
		return invalid("timeout_s", "invalid_value", "timeout_s: %v.", err)
	}
	spec := tools.WebhookSpec{
		Name: r.Name, Description: r.Description, URL: r.URL, Parameters: r.Parameters, Secret: []byte(r.Secret),
		Timeout: timeout, MaxConcurrency: r.MaxConcurrency, Idempotent: r.Idempotent, CacheTTL: seconds(r.CacheTTLS),
		Egress: s.webhooks,
	}
	if len(r.Headers) > 0 {
		spec.Header = http.Header{}
		for k, v := range r.Headers {
			spec.Header.Set(k, v)
		}
	}
	tenant := who(c).tenant
	if err := s.rt.RegisterWebhook(runtime.WebhookRegistration{Tenant: tenant, Spec: spec, Expected: r.ExpectedS, Replace: replace}); err != nil {
		return fromRuntime(err)
	}
	t, _ := s.rt.Tools().GetIn(tenant, r.Name)
	status := http.StatusCreated
	if replace {
		status = http.StatusOK
	}
	return c.JSON(status, s.toolInfo(tenant, t))
}

// deleteTool removes one of the caller's webhook tools (DELETE
// /v1/tools/{name}); calls already running finish.
func (s *Server) deleteTool(c echo.Context) error {
	name := c.Param("name")
	if err := s.rt.RemoveTool(who(c).tenant, name); err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"id": name, "object": "tool.deleted", "deleted": true})
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
	res, err := s.rt.Invoke(c.Request().Context(), runtime.InvokeRequest{Tenant: who(c).tenant, Program: program, Thread: thread,
		Tool: name, Arguments: args, CallID: r.CallID})
	if err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, invokeResponse{Tool: name, CallID: r.CallID, Program: program, Content: res.Content,
		IsError: res.IsError, Truncated: res.Truncated, Cached: res.Cached, DurationMS: float64(res.Duration().Microseconds()) / 1000})
}
