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
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
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
	// APIKeys, when not empty, are the accepted bearer tokens; a request
	// without one of them gets 401 (GET /healthz excepted).
	APIKeys []string
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
	keys [][32]byte
	log  *slog.Logger

	webhookClient *http.Client
	regMu         sync.Mutex
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
	s := &Server{cfg: cfg, rt: cfg.Runtime, log: cfg.Logger}
	for _, k := range cfg.APIKeys {
		if k = strings.TrimSpace(k); k != "" {
			s.keys = append(s.keys, sha256.Sum256([]byte(k)))
		}
	}
	if cfg.WebhookPolicy != nil {
		s.webhookClient = webhookClient(*cfg.WebhookPolicy)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler
	e.Use(s.recoverer, s.auth)
	e.GET("/healthz", s.healthz)
	e.GET("/metrics", s.metrics)
	e.GET("/v1/models", s.listModels)
	e.GET("/v1/models/:id", s.getModel)
	e.POST("/v1/chat/completions", s.chatCompletions)
	e.GET("/v1/tools", s.listTools)
	e.POST("/v1/tools", s.registerTool)
	e.POST("/v1/tools/:name/invoke", s.invokeTool)
	e.GET("/v1/programs", s.listPrograms)
	e.GET("/v1/programs/:id", s.getProgram)
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

// auth checks the bearer token when keys are configured.
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.keys) == 0 || c.Request().URL.Path == "/healthz" {
			return next(c)
		}
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="pitstop"`)
			return newError(http.StatusUnauthorized, typeAuth, "", "missing_api_key",
				"You didn't provide an API key. Provide it in an Authorization header: Authorization: Bearer YOUR_KEY.")
		}
		sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
		match := 0
		for i := range s.keys {
			match |= subtle.ConstantTimeCompare(sum[:], s.keys[i][:])
		}
		if match != 1 {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="pitstop", error="invalid_token"`)
			return newError(http.StatusUnauthorized, typeAuth, "", "invalid_api_key", "Incorrect API key provided.")
		}
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
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": []modelObject{s.model()}})
}

func (s *Server) getModel(c echo.Context) error {
	if id := c.Param("id"); id != s.rt.Model().Name() {
		return newError(http.StatusNotFound, typeInvalidRequest, "model", "model_not_found", "The model %q does not exist.", id)
	}
	return c.JSON(http.StatusOK, s.model())
}

func (s *Server) listPrograms(c echo.Context) error {
	ps, err := s.rt.Programs(c.Request().Context())
	if err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": ps})
}

func (s *Server) getProgram(c echo.Context) error {
	p, ok := s.rt.Program(c.Request().Context(), c.Param("id"))
	if !ok {
		return newError(http.StatusNotFound, typeNotFound, "id", "program_not_found", "No program %q in the program table.", c.Param("id"))
	}
	return c.JSON(http.StatusOK, p)
}
