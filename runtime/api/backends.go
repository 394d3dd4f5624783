package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/runtime/remote"
)

// mountBackends adds /v1/backends when the runtime serves remote backends:
// GET lists them; POST adds one ({"url", "kind", "weight", "max_inflight",
// "api_key_env"}); POST /v1/backends/{name}/drain stops new calls to one;
// DELETE removes one. Changes need an admin key when keys are configured.
func (s *Server) mountBackends(e *echo.Echo) {
	if s.rt.Remote() == nil {
		return
	}
	e.GET("/v1/backends", s.listBackends)
	e.POST("/v1/backends", s.addBackend)
	e.POST("/v1/backends/:name/drain", s.drainBackend)
	e.DELETE("/v1/backends/:name", s.removeBackend)
}

func (s *Server) listBackends(c echo.Context) error {
	r := s.rt.Remote()
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "balancer": r.Balancer(), "data": r.Backends()})
}

// adminOnly refuses a change of the fleet to a key that is not an admin's.
func adminOnly(c echo.Context) *APIError {
	if !who(c).admin {
		return newError(http.StatusForbidden, typePermission, "", "admin_only", "changing the backends needs an admin key")
	}
	return nil
}

func (s *Server) addBackend(c echo.Context) error {
	if aerr := adminOnly(c); aerr != nil {
		return aerr
	}
	body, aerr := s.readBody(c)
	if aerr != nil {
		return aerr
	}
	var in struct {
		URL         string  `json:"url"`
		Kind        string  `json:"kind"`
		Weight      float64 `json:"weight"`
		MaxInflight int     `json:"max_inflight"`
		APIKeyEnv   string  `json:"api_key_env"`
	}
	if aerr := decodeObject(body, &in); aerr != nil {
		return aerr
	}
	spec := in.URL
	if in.Kind != "" {
		spec += ",kind=" + in.Kind
	}
	if in.Weight != 0 {
		spec += ",weight=" + strconv.FormatFloat(in.Weight, 'g', -1, 64)
	}
	if in.MaxInflight != 0 {
		spec += ",max-inflight=" + strconv.Itoa(in.MaxInflight)
	}
	if in.APIKeyEnv != "" {
		spec += ",api-key-env=" + in.APIKeyEnv
	}
	specs, err := remote.ParseSpecs([]string{spec})
	if err != nil || len(specs) != 1 {
		msg := "url is required"
		if err != nil {
			msg = err.Error()
		}
		return invalid("url", "invalid_backend", "%s", msg)
	}
	if err := s.rt.Remote().Add(specs[0]); err != nil {
		return newError(http.StatusConflict, typeConflict, "url", "backend_exists", "%v", err)
	}
	for _, b := range s.rt.Remote().Backends() {
		if b.Name == specs[0].Name() {
			return c.JSON(http.StatusCreated, b)
		}
	}
	return c.NoContent(http.StatusCreated)
}

func (s *Server) drainBackend(c echo.Context) error {
	if aerr := adminOnly(c); aerr != nil {
		return aerr
	}
	if !s.rt.Remote().Drain(c.Param("name")) {
		return backendNotFound(c.Param("name"))
	}
	return c.JSON(http.StatusOK, map[string]any{"name": c.Param("name"), "draining": true})
}

func (s *Server) removeBackend(c echo.Context) error {
	if aerr := adminOnly(c); aerr != nil {
		return aerr
	}
	if !s.rt.Remote().Remove(c.Param("name")) {
		return backendNotFound(c.Param("name"))
	}
	return c.JSON(http.StatusOK, map[string]any{"name": c.Param("name"), "deleted": true})
}

// routerHealth is /healthz of a router: 200 while it serves (a Kubernetes
// readiness probe keeps it in its Service, so that with every backend down
// clients get 503 with Retry-After rather than a refused connection), the
// status saying how many backends are up.
func (s *Server) routerHealth(c echo.Context) error {
	bs := s.rt.Remote().Backends()
	up := 0
	for _, b := range bs {
		if b.Up && !b.Draining {
			up++
		}
	}
	status := "ok"
	if up == 0 {
		status = "no_backend_up"
	}
	return c.JSON(http.StatusOK, map[string]any{"status": status, "backends_up": up, "backends": bs,
		"balancer": s.rt.Remote().Balancer(), "uptime_s": time.Since(s.rt.Started()).Seconds()})
}

func backendNotFound(name string) *APIError {
	return newError(http.StatusNotFound, typeNotFound, "name", "backend_not_found", "No backend %q (GET /v1/backends lists them by host:port).", name)
}

func (s *Server) remoteModels() []modelObject {
	var out []modelObject
	for _, m := range s.rt.Remote().Models() {
		out = append(out, modelObject{ID: m.ID, Object: "model", Created: s.rt.Started().Unix(), OwnedBy: "pitstop-router",
			Description: "served by " + strings.Join(m.Backends, ", ")})
	}
	return out
}

func (s *Server) listRemoteModels(c echo.Context) error {
	data := s.remoteModels()
	if data == nil {
		data = []modelObject{}
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) getRemoteModel(c echo.Context) error {
	for _, m := range s.remoteModels() {
		if m.ID == c.Param("id") {
			return c.JSON(http.StatusOK, m)
		}
	}
	return newError(http.StatusNotFound, typeInvalidRequest, "model", "model_not_found", "The model %q does not exist.", c.Param("id"))
}
