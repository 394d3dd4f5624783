package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/google/shlex"
)

// ServerSpec says how to reach one MCP server: a command pitstop starts
// (stdio) or a streamable-HTTP endpoint. Exactly one of Command and URL is
// set.
type ServerSpec struct {
	// Name names the server; its tools are registered as Name + "__" +
	// tool (see ToolName). It must satisfy ValidServerName.
	Name string
	// Command is the program and its arguments of a stdio server: pitstop
	// starts it, speaks MCP over its stdin and stdout, logs its stderr, and
	// starts it again when it exits.
	Command []string
	// Env is added to the command's environment (KEY=VALUE), which is
	// otherwise pitstop's own.
	Env []string
	// Dir is the command's working directory (empty: pitstop's).
	Dir string
	// URL is the endpoint of a streamable-HTTP server.
	URL string
	// Header is sent with every request to URL (e.g. Authorization).
	Header http.Header
	// HTTPClient makes the requests to URL (nil: a client of its own).
	HTTPClient *http.Client
	// Timeout bounds one call of the server's tools (0: the executor's
	// default timeout).
	Timeout time.Duration
}

// MaxServerNameLen bounds a server's name, leaving at least 30 characters of
// a 64-character tool name to the tool.
const MaxServerNameLen = 32

var serverNameRE = regexp.MustCompile(`^[a-zA-Z0-9]+([-_][a-zA-Z0-9]+)*$`)

// ValidServerName reports whether name can prefix tool names: 1 to 32
// letters and digits, single '-' or '_' between them (so "__", which ends
// the prefix in a tool name, never occurs inside it).
func ValidServerName(name string) bool {
	return len(name) <= MaxServerNameLen && serverNameRE.MatchString(name)
}

// Stdio reports whether the server is a command pitstop starts.
func (s ServerSpec) Stdio() bool { return len(s.Command) > 0 }

// Target is the command line or the URL, for logs and status.
func (s ServerSpec) Target() string {
	if s.Stdio() {
		return strings.Join(s.Command, " ")
	}
	return s.URL
}

// Validate checks the spec: the name, exactly one of Command and URL, an
// http(s) URL with a host, a non-negative timeout.
func (s ServerSpec) Validate() error {
	if !ValidServerName(s.Name) {
		return fmt.Errorf("invalid MCP server name %q: use 1 to %d letters and digits with single '-' or '_' between them", s.Name, MaxServerNameLen)
	}
	switch {
	case s.Stdio() && s.URL != "":
		return fmt.Errorf("MCP server %q: both a command and a URL; give one", s.Name)
	case !s.Stdio() && s.URL == "":
		return fmt.Errorf("MCP server %q: no command and no URL; give one", s.Name)
	case s.Stdio() && strings.TrimSpace(s.Command[0]) == "":
		return fmt.Errorf("MCP server %q: empty command", s.Name)
	case s.Timeout < 0:
		return fmt.Errorf("MCP server %q: negative timeout %v", s.Name, s.Timeout)
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("MCP server %q: URL %q must be http:// or https:// with a host", s.Name, s.URL)
		}
	}
	return nil
}

// ParseSpec parses "NAME=COMMAND [ARGS...]" (a stdio server; the command
// line is split like a shell's words, quotes included, '#' starting a
// comment) or "NAME=URL" (an http:// or https:// streamable-HTTP endpoint).
func ParseSpec(v string) (ServerSpec, error) {
	name, rest, ok := strings.Cut(v, "=")
	name, rest = strings.TrimSpace(name), strings.TrimSpace(rest)
	if !ok || name == "" || rest == "" {
		return ServerSpec{}, fmt.Errorf("invalid MCP server %q: want NAME=COMMAND [ARGS...] or NAME=URL", v)
	}
	spec := ServerSpec{Name: name}
	if strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://") {
		spec.URL = rest
	} else {
		words, err := shlex.Split(rest)
		if err != nil {
			return ServerSpec{}, fmt.Errorf("invalid MCP server %q: command line: %w", v, err)
		}
		if len(words) == 0 {
			return ServerSpec{}, fmt.Errorf("invalid MCP server %q: empty command", v)
		}
		spec.Command = words
	}
	if err := spec.Validate(); err != nil {
		return ServerSpec{}, err
	}
	return spec, nil
}

// ParseHeader parses "NAME=Header-Name: value", a header for server NAME's
// HTTP requests. ${VAR} and $VAR in the value are replaced by environment
// variables read with lookup (nil: os.LookupEnv), so that a secret stays out
// of the command line; an unset variable is an error.
func ParseHeader(v string, lookup func(string) (string, bool)) (server, key, value string, err error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	server, line, ok := strings.Cut(v, "=")
	server = strings.TrimSpace(server)
	key, value, ok2 := strings.Cut(line, ":")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !ok || !ok2 || server == "" || key == "" {
		return "", "", "", fmt.Errorf("invalid MCP header %q: want NAME=Header-Name: value (value may use ${ENV_VAR})", v)
	}
	if strings.ContainsAny(key, " \t\r\n") {
		return "", "", "", fmt.Errorf("invalid MCP header %q: header name %q has white space", v, key)
	}
	var missing []string
	value = os.Expand(value, func(name string) string {
		s, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return s
	})
	if len(missing) > 0 {
		return "", "", "", fmt.Errorf("MCP header %q of server %q: environment variable %s is not set", key, server, strings.Join(missing, ", "))
	}
	if strings.ContainsAny(value, "\r\n") {
		return "", "", "", errors.New("MCP header " + key + ": value holds a line break")
	}
	return server, http.CanonicalHeaderKey(key), value, nil
}
