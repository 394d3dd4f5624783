// Command toolserver is a tool author's webhook server for pitstop: a small,
// deterministic "weather" tool served over HTTP. The runtime registers it
// with tools.NewWebhookTool and POSTs each call here, signed with a shared
// secret; this server checks the signature (tools.VerifySignature) and the
// timestamp before doing anything, and answers {"content": "..."}.
//
//	PITSTOP_TOOL_SECRET=change-me go run ./examples/toolserver -addr 127.0.0.1:8081
//
// and on the runtime side:
//
//	t, err := tools.NewWebhookTool(tools.WebhookSpec{
//		Name:        "weather",
//		Description: "Current weather in a city",
//		URL:         "http://127.0.0.1:8081/tools/weather",
//		Parameters:  json.RawMessage(weatherSchema), // WeatherSchema below
//		Secret:      []byte("change-me"),
//		Timeout:     5 * time.Second,
//	})
//	registry.Register(t)
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/pitstop-llm/pitstop/tools"
)

// WeatherSchema is the JSON Schema of the weather tool's arguments, to
// register on the runtime side.
const WeatherSchema = `{"type":"object","properties":{"city":{"type":"string","minLength":1,"description":"City name, e.g. Paris"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"],"additionalProperties":false}`

// maxBody bounds a request body.
const maxBody = 1 << 20

// request is what pitstop POSTs for each call.
type request struct {
	Tool      string          `json:"tool"`
	CallID    string          `json:"call_id"`
	Timestamp int64           `json:"timestamp"`
	Arguments json.RawMessage `json:"arguments"`
}

type weatherArgs struct {
	City string `json:"city"`
	Unit string `json:"unit"`
}

// server handles signed tool calls.
type server struct {
	secret  []byte
	maxSkew time.Duration
	now     func() time.Time
	log     *slog.Logger
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /tools/weather", s.handleWeather)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

// verify reads the body and checks signature and timestamp; it writes the
// error response itself and returns false when the request is refused.
func (s *server) verify(w http.ResponseWriter, r *http.Request) (*request, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	// The signature first, on the raw bytes, before trusting anything in them.
	if !tools.VerifySignature(s.secret, body, r.Header.Get(tools.SignatureHeader)) {
		s.log.Warn("refused call with a bad signature", "remote", r.RemoteAddr)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return nil, false
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	// The timestamp is inside the signed body: an old request replayed later is refused.
	if d := s.now().Sub(time.Unix(req.Timestamp, 0)); d > s.maxSkew || d < -s.maxSkew {
		http.Error(w, "stale or future timestamp", http.StatusUnauthorized)
		return nil, false
	}
	return &req, true
}

func (s *server) handleWeather(w http.ResponseWriter, r *http.Request) {
	req, ok := s.verify(w, r)
	if !ok {
		return
	}
	var a weatherArgs
	if err := json.Unmarshal(req.Arguments, &a); err != nil || strings.TrimSpace(a.City) == "" {
		reply(w, "", errors.New("arguments must be {\"city\": \"...\"}"))
		return
	}
	s.log.Info("weather call", "call_id", req.CallID, "city", a.City)
	reply(w, weather(a.City, a.Unit), nil)
}

// weather is a deterministic stand-in for a real weather service: the same
// city always gets the same answer.
func weather(city, unit string) string {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(strings.TrimSpace(city))))
	v := h.Sum32()
	conditions := []string{"sunny", "partly cloudy", "overcast", "light rain", "windy", "foggy"}
	c := int(v%36) - 5 // -5 .. 30 °C
	temp := fmt.Sprintf("%d °C", c)
	if unit == "fahrenheit" {
		temp = fmt.Sprintf("%d °F", c*9/5+32)
	}
	return fmt.Sprintf("%s: %s, %s, humidity %d%%", strings.TrimSpace(city), conditions[v/36%uint32(len(conditions))], temp, 30+int(v/216%60))
}

// reply answers in the JSON form pitstop reads: {"content": ...} or {"error": ...}.
func reply(w http.ResponseWriter, content string, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	json.NewEncoder(w).Encode(map[string]string{"content": content})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	maxSkew := flag.Duration("max-skew", 5*time.Minute, "refuse requests whose timestamp is further than this from now")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	secret := os.Getenv("PITSTOP_TOOL_SECRET")
	if secret == "" {
		log.Error("set PITSTOP_TOOL_SECRET to the secret shared with pitstop")
		os.Exit(2)
	}
	s := &server{secret: []byte(secret), maxSkew: *maxSkew, now: time.Now, log: log}
	srv := &http.Server{Addr: *addr, Handler: s.routes(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	log.Info("tool server listening", "addr", *addr, "tool", "POST /tools/weather")
	if err := srv.ListenAndServe(); err != nil {
		log.Error("server stopped", "err", err)
		os.Exit(1)
	}
}
