package remote

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Kind is the software a backend runs: it decides which of the engine's own
// controls pitstop uses (docs/router.md has the table).
type Kind string

// Backend kinds.
const (
	KindVLLM     Kind = "vllm"     // priority field under --scheduling-policy priority
	KindSGLang   Kind = "sglang"   // priority field under --enable-priority-scheduling
	KindLlamaCpp Kind = "llamacpp" // id_slot, cache_prompt, /slots save|restore|erase
	KindPitstop  Kind = "pitstop"  // program headers: the backend keeps the program's KV across tools
	KindOpenAI   Kind = "openai"   // the plain API, nothing more
)

var kinds = []Kind{KindVLLM, KindSGLang, KindLlamaCpp, KindPitstop, KindOpenAI}

// Spec describes one backend.
type Spec struct {
	// URL is the server's base URL (http://host:port, with or without /v1).
	URL  string
	Kind Kind
	// Weight scales the balancer's view of the backend's speed (1: the
	// fleet's usual).
	Weight float64
	// MaxInflight caps the calls sent to the backend at once (0: found
	// from its measured latency).
	MaxInflight int
	// APIKeyEnv names the environment variable holding the backend's
	// bearer token ("" : none).
	APIKeyEnv string
	// Slots, for a llama.cpp server, is its number of slots (-np): the
	// router gives each program a slot of its own (id_slot). SlotSave says
	// the server was started with --slot-save-path: a program waiting on a
	// long tool has its slot saved to a file and restored for its next
	// turn (swap); without it, the slot is erased (discard).
	Slots    int
	SlotSave bool
	// Transport is how requests reach the backend: TransportInline (the
	// default for http:// backends not behind a proxy) or TransportNetHTTP
	// (net/http's Transport: the default for https and proxies, and the
	// fallback).
	Transport string
}

// Backend transports (Spec.Transport).
const (
	TransportInline  = "inline"
	TransportNetHTTP = "nethttp"
)

// Name is how the backend is named in metrics, logs and /v1/backends: its
// host and port.
func (s Spec) Name() string {
	u, err := url.Parse(s.URL)
	if err != nil {
		return s.URL
	}
	return u.Host
}

// ParseSpecs reads --backend values: each a comma list of URLs, each URL
// followed by its options (kind=, weight=, max-inflight=, api-key-env=,
// slots=, slot-save=, transport=):
//
//	http://a:8000,kind=vllm,max-inflight=16,http://b:8000
func ParseSpecs(values []string) ([]Spec, error) {
	var out []Spec
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			key, val, isOpt := strings.Cut(item, "=")
			if isOpt && !strings.Contains(key, "/") && !strings.Contains(key, ":") {
				if len(out) == 0 {
					return nil, fmt.Errorf("--backend: option %q comes before any URL (write URL,%s)", item, item)
				}
				if err := setOption(&out[len(out)-1], key, val); err != nil {
					return nil, err
				}
				continue
			}
			s, err := parseURL(item)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	for _, s := range out {
		if (s.Slots > 0 || s.SlotSave) && s.Kind != KindLlamaCpp {
			return nil, fmt.Errorf("--backend %s: slots= and slot-save= are options of kind=llamacpp", s.URL)
		}
		if s.Transport == TransportInline && strings.HasPrefix(s.URL, "https:") {
			return nil, fmt.Errorf("--backend %s: transport=inline speaks plain HTTP; an https backend takes transport=nethttp", s.URL)
		}
		if s.SlotSave && s.Slots == 0 {
			return nil, fmt.Errorf("--backend %s: slot-save=true needs slots=N (the server's -np)", s.URL)
		}
	}
	seen := map[string]bool{}
	for _, s := range out {
		if seen[s.Name()] {
			return nil, fmt.Errorf("--backend: %s is given twice", s.Name())
		}
		seen[s.Name()] = true
	}
	return out, nil
}

// parseURL checks a backend URL: http or https, a host, nothing after the
// path but /v1.
func parseURL(raw string) (Spec, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return Spec{}, fmt.Errorf("--backend: malformed URL %q (want http://host:port or https://host:port, optionally ending in /v1)", raw)
	}
	if _, err := strconv.Atoi(u.Port()); u.Port() != "" && err != nil {
		return Spec{}, fmt.Errorf("--backend: malformed port in %q", raw)
	}
	path := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.Path = strings.TrimSuffix(path, "/")
	return Spec{URL: u.String(), Kind: KindOpenAI, Weight: 1}, nil
}

func setOption(s *Spec, key, val string) error {
	switch key {
	case "kind":
		for _, k := range kinds {
			if Kind(val) == k {
				s.Kind = k
				return nil
			}
		}
		return fmt.Errorf("--backend %s: unknown kind %q (valid: vllm, sglang, llamacpp, pitstop, openai)", s.URL, val)
	case "weight":
		w, err := strconv.ParseFloat(val, 64)
		if err != nil || !(w > 0) || w > 1000 {
			return fmt.Errorf("--backend %s: weight=%q must be a number in (0, 1000]", s.URL, val)
		}
		s.Weight = w
	case "max-inflight":
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || n > 100000 {
			return fmt.Errorf("--backend %s: max-inflight=%q must be a whole number >= 0 (0: found from the latency)", s.URL, val)
		}
		s.MaxInflight = n
	case "slots":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > 4096 {
			return fmt.Errorf("--backend %s: slots=%q must be the server's number of slots (-np), 1 to 4096", s.URL, val)
		}
		s.Slots = n
	case "slot-save":
		b, err := strconv.ParseBool(val)
		if err != nil {
			return fmt.Errorf("--backend %s: slot-save=%q must be true or false", s.URL, val)
		}
		s.SlotSave = b
	case "transport":
		if val != TransportInline && val != TransportNetHTTP {
			return fmt.Errorf("--backend %s: transport=%q is not a transport (valid: inline, nethttp)", s.URL, val)
		}
		s.Transport = val
	case "api-key-env":
		if val == "" {
			return fmt.Errorf("--backend %s: api-key-env needs a variable name", s.URL)
		}
		s.APIKeyEnv = val
	default:
		return fmt.Errorf("--backend %s: unknown option %q (valid: kind=, weight=, max-inflight=, api-key-env=, slots=, slot-save=, transport=)", s.URL, key)
	}
	return nil
}
