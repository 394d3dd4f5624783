// Package api is pitstop's OpenAI-compatible HTTP server (labstack/echo):
// chat completions (stream and non-stream, tools, tool_choice, parallel tool
// calls, usage), models, the tool registry (list, register a webhook tool,
// invoke a tool under a program), the program table, health and Prometheus
// metrics. A go-openai client works against it by changing only its base
// URL. Errors are OpenAI's error JSON with the matching HTTP status.
//
// Program identity comes from the headers X-Pitstop-Program, X-Pitstop-Thread
// and X-Pitstop-Parents (comma-separated); a call without X-Pitstop-Program
// is a program of its own.
package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/testmodel"
	"github.com/pitstop-llm/pitstop/tools"
)

// Program headers.
const (
	HeaderProgram = "X-Pitstop-Program"
	HeaderThread  = "X-Pitstop-Thread"
	HeaderParents = "X-Pitstop-Parents"
	// HeaderToolRounds, on a non-stream response, is the number of
	// server-side tool rounds the call ran.
	HeaderToolRounds = "X-Pitstop-Tool-Rounds"
)

// DefaultMaxBodyBytes bounds a request body.
const DefaultMaxBodyBytes = 8 << 20

// Config configures a Server.
type Config struct {
	Runtime *runtime.Runtime
	// Keys are the accepted API keys and their tenants (ReloadKeys
	// replaces them); with none the server is open and single-tenant. A
	// request without an accepted key gets 401 (GET /healthz excepted).
	Keys *Keyring
	// APIKeys are more accepted bearer tokens, each a tenant of its own.
	APIKeys []string
	// TenantDefaults are the limits of tenants the keys file says nothing
	// of.
	TenantDefaults runtime.TenantLimits
	// MetricsPublic serves /metrics without a key; otherwise, with keys
	// configured, only admin keys read it (it names tenants and tools).
	MetricsPublic bool
	// MaxBodyBytes bounds request bodies (0: DefaultMaxBodyBytes); a larger
	// body gets 413.
	MaxBodyBytes int64
	// BodyReadTimeout is how long a request body may go without a byte
	// arriving (0: DefaultBodyReadTimeout); body.go states the whole rule.
	BodyReadTimeout time.Duration
	// AllowToolRegistration enables POST /v1/tools.
	AllowToolRegistration bool
	// WebhookPolicy restricts the addresses registered webhook tools may
	// reach (nil: any).
	WebhookPolicy *tools.DialPolicy
	// WebhookLimits are the server's maxima of webhook tools (timeout_s,
	// response size); zero fields are tools' defaults.
	WebhookLimits tools.WebhookLimits
	// MCP configures /mcp and the MCP servers pitstop takes tools from.
	MCP MCPConfig
	// OnCallDone, if set, is told about every chat call the server
	// answered (for tests and load reports).
	OnCallDone func(CallStats)
	Logger     *slog.Logger
}

// CallStats is what the server measured of one answered chat call.
type CallStats struct {
	ID      string
	Program string
	Stream  bool
	Err     error
	Total   time.Duration // request received → response written
	Engine  time.Duration // submitted → finished in the engine (tool rounds included)
	Tools   time.Duration // server-side tool rounds
	// Outside is the time spent outside the engine and the tools: reading
	// and decoding the request, rendering and tokenizing the prompt and tool
	// results, and writing the response after the engine finished.
	Outside time.Duration
	// Prepare (request received → handed to the engine) and Respond
	// (finished in the engine → response written) are the parts of Outside
	// before and after the engine; the rest is tool results' rendering.
	Prepare, Respond time.Duration
}

// Server is the HTTP server.
type Server struct {
	cfg  Config
	rt   *runtime.Runtime
	e    *echo.Echo
	keys atomic.Pointer[Keyring]
	log  *slog.Logger

	webhooks *tools.WebhookEgress // policy, client and maxima of every webhook tool
	// responses are the stored responses of the Responses API, per tenant.
	responses *responseStore
}

// New builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("api: no runtime")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, rt: cfg.Runtime, log: cfg.Logger, responses: newResponseStore(maxStoredResponses)}
	if err := s.ReloadKeys(cfg.Keys); err != nil {
		return nil, err
	}
	policy := tools.OpenDialPolicy()
	if cfg.WebhookPolicy != nil {
		policy = *cfg.WebhookPolicy
	}
	eg, err := tools.NewWebhookEgress(policy, cfg.WebhookLimits, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	s.webhooks = eg
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler
	e.Use(s.recoverer, s.auth)
	e.GET("/healthz", s.healthz)
	e.GET("/metrics", s.metrics)
	e.GET("/v1/models", s.listModels)
	e.GET("/v1/models/:id", s.getModel)
	e.POST("/v1/chat/completions", s.chatCompletions)
	e.POST("/v1/responses", s.createResponse)
	e.GET("/v1/responses/:id", s.getResponse)
	e.DELETE("/v1/responses/:id", s.deleteResponse)
	e.POST("/v1/responses/:id/cancel", s.cancelResponse)
	e.GET("/v1/responses/:id/input_items", s.listInputItems)
	e.GET("/v1/tools", s.listTools)
	e.POST("/v1/tools", s.registerTool)
	e.PUT("/v1/tools/:name", s.replaceTool)
	e.DELETE("/v1/tools/:name", s.deleteTool)
	e.POST("/v1/tools/:name/invoke", s.invokeTool)
	e.GET("/v1/programs", s.listPrograms)
	e.GET("/v1/programs/:id", s.getProgram)
	s.mountBackends(e)
	if err := s.mountMCP(e); err != nil {
		return nil, err
	}
	s.e = e
	return s, nil
}

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.e }

// recoverer turns a panicking handler into a 500, keeping the server up.
func (s *Server) recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panicked", "path", c.Request().URL.Path, "panic", p)
				err = newError(http.StatusInternalServerError, typeServer, "", "internal_error", "internal error")
			}
		}()
		return next(c)
	}
}

// ReloadKeys replaces the accepted keys and the tenants' limits (e.g. on
// SIGHUP): requests already authenticated go on; the next ones use the new
// keys. keys may be nil (only Config.APIKeys then).
func (s *Server) ReloadKeys(keys *Keyring) error {
	var all []Key
	var overrides map[string]TenantOverride
	if keys != nil {
		for _, e := range keys.keys {
			all = append(all, e.key)
		}
		overrides = keys.Overrides
	}
	for _, k := range s.cfg.APIKeys {
		if k = strings.TrimSpace(k); k != "" {
			all = append(all, Key{Secret: k, Tenant: plainTenant(k)})
		}
	}
	ring, err := NewKeyring(all, overrides)
	if err != nil {
		return err
	}
	s.rt.SetTenantLimits(s.cfg.TenantDefaults, ring.Limits(s.cfg.TenantDefaults))
	s.keys.Store(ring)
	return nil
}

// principal is who a request acts for.
type principal struct {
	tenant string // "" on an open server
	admin  bool   // sees every tenant (always, on an open server)
}

const principalKey = "pitstop.principal"

// who returns the request's principal (set by auth).
func who(c echo.Context) principal {
	p, _ := c.Get(principalKey).(principal)
	return p
}

// constantTimeEqual is 1 when a and b are equal, taking the same time
// whatever they hold.
func constantTimeEqual(a, b [32]byte) int { return subtle.ConstantTimeCompare(a[:], b[:]) }

// bearerToken returns the token of an Authorization header. The scheme is
// case-insensitive (RFC 9110 §11.1).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// auth checks the bearer token when keys are configured and sets the
// request's principal.
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ring := s.keys.Load()
		path := c.Request().URL.Path
		if ring.Len() == 0 || path == "/healthz" || (path == "/metrics" && s.cfg.MetricsPublic) {
			c.Set(principalKey, principal{admin: ring.Len() == 0})
			return next(c)
		}
		token, ok := bearerToken(c.Request().Header.Get(echo.HeaderAuthorization))
		if !ok {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="pitstop"`)
			return newError(http.StatusUnauthorized, typeAuth, "", "missing_api_key",
				"You didn't provide an API key. Provide it in an Authorization header: Authorization: Bearer YOUR_KEY.")
		}
		key, ok := ring.lookup(token)
		if !ok {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="pitstop", error="invalid_token"`)
			return newError(http.StatusUnauthorized, typeAuth, "", "invalid_api_key", "Incorrect API key provided.")
		}
		if path == "/metrics" && !key.Admin {
			return newError(http.StatusForbidden, typePermission, "", "admin_only",
				"/metrics names every tenant: it is served to admin keys only (or to anyone with serve --metrics-public).")
		}
		c.Set(principalKey, principal{tenant: key.Tenant, admin: key.Admin})
		return next(c)
	}
}

// programHeaders reads the program identity of a request.
func programHeaders(c echo.Context) (program, thread string, parents []string, err *APIError) {
	h := c.Request().Header
	program = strings.TrimSpace(h.Get(HeaderProgram))
	thread = strings.TrimSpace(h.Get(HeaderThread))
	for _, v := range []struct{ name, val string }{{HeaderProgram, program}, {HeaderThread, thread}} {
		if len(v.val) > 256 || strings.ContainsFunc(v.val, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return "", "", nil, invalid(v.name, "invalid_header", "Header %s must be at most 256 printable characters.", v.name)
		}
	}
	if p := h.Get(HeaderParents); p != "" {
		for _, x := range strings.Split(p, ",") {
			if x = strings.TrimSpace(x); x != "" {
				if len(x) > 256 {
					return "", "", nil, invalid(HeaderParents, "invalid_header", "Header %s: parent ids must be at most 256 characters.", HeaderParents)
				}
				parents = append(parents, x)
			}
		}
	}
	if program == "" && (thread != "" || len(parents) > 0) {
		return "", "", nil, invalid(HeaderProgram, "missing_header", "Headers %s and %s need %s.", HeaderThread, HeaderParents, HeaderProgram)
	}
	return program, thread, parents, nil
}

func (s *Server) healthz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	defer cancel()
	st, err := s.rt.Engine(ctx)
	if err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "error": err.Error()})
	}
	status, code := "ok", http.StatusOK
	if st.CheckErr != "" || st.Leaked != 0 {
		status, code = "broken", http.StatusInternalServerError
	}
	if s.rt.Remote() != nil {
		return s.routerHealth(c)
	}
	return c.JSON(code, map[string]any{"status": status, "model": s.rt.Model().Name(), "engine": st,
		"uptime_s": time.Since(s.rt.Started()).Seconds()})
}

func (s *Server) metrics(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	defer cancel()
	_, _ = s.rt.Engine(ctx) // refreshes the state gauges
	promhttp.HandlerFor(s.rt.Metrics().Registry, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
	return nil
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	// Description says what the model is (the scripted one is for tests).
	Description string `json:"description,omitempty"`
}

func (s *Server) model() modelObject {
	m := s.rt.Model()
	desc := ""
	if m.Name() == testmodel.Name {
		desc = "SCRIPTED TEST MODEL: replies follow fixed rules (see runtime/testmodel); for tests only, not a language model."
	}
	return modelObject{ID: m.Name(), Object: "model", Created: s.rt.Started().Unix(), OwnedBy: "pitstop", Description: desc}
}

func (s *Server) listModels(c echo.Context) error {
	if s.rt.Remote() != nil {
		return s.listRemoteModels(c)
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": []modelObject{s.model()}})
}

func (s *Server) getModel(c echo.Context) error {
	if s.rt.Remote() != nil {
		return s.getRemoteModel(c)
	}
	if id := c.Param("id"); id != s.rt.Model().Name() {
		return newError(http.StatusNotFound, typeInvalidRequest, "model", "model_not_found", "The model %q does not exist.", id)
	}
	return c.JSON(http.StatusOK, s.model())
}

// listPrograms lists the caller's programs (an admin's: every tenant's,
// or one tenant's with ?tenant=).
func (s *Server) listPrograms(c echo.Context) error {
	p := who(c)
	tenant, all := p.tenant, p.admin
	if t := c.QueryParam("tenant"); t != "" && p.admin {
		tenant, all = t, false
	}
	ps, err := s.rt.Programs(c.Request().Context(), tenant, all)
	if err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": ps})
}

// getProgram reads one of the caller's programs (an admin names another
// tenant's with ?tenant=); another tenant's program is not found.
func (s *Server) getProgram(c echo.Context) error {
	tenant := who(c).tenant
	if t := c.QueryParam("tenant"); t != "" && who(c).admin {
		tenant = t
	}
	p, ok := s.rt.Program(c.Request().Context(), tenant, c.Param("id"))
	if !ok {
		return newError(http.StatusNotFound, typeNotFound, "id", "program_not_found", "No program %q in the program table.", c.Param("id"))
	}
	return c.JSON(http.StatusOK, p)
}
