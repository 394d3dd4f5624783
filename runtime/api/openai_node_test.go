package api

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envOpenAINode names the node_modules directory holding the OpenAI Node
// SDK, as the Makefile sets it from scripts/fetch_openai_node.sh; set and
// empty, it says the script failed.
const envOpenAINode = "PITSTOP_OPENAI_NODE"

// nodeCheckN is how many requests each repeated check of
// scripts/openai_node_check.mjs makes in `go test` (make check-openai-node
// makes 100); PITSTOP_OPENAI_NODE_N overrides it.
const nodeCheckN = 8

// TestOpenAINodeSDK runs scripts/openai_node_check.mjs — the official
// OpenAI Node SDK (npm openai 6.x) — against the built-in tiny model
// served in-process: stop sequences in both modes, no undeclared tool
// call, tool_choice none / required / named, response_format json_schema
// strict with and without free strings, a strict tool with free-string
// arguments, the Responses API with previous_response_id, streamed
// response events in order, background responses, a hosted tool's 400.
// It skips only when the SDK cannot be installed because npm or its
// registry is unreachable.
func TestOpenAINodeSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the OpenAI Node SDK checks in -short mode")
	}
	if raceEnabled {
		// The server's goroutines are race-tested by the Go clients' tests;
		// the SDK's run (about 5 s) is not repeated 5-10 times slower.
		t.Skip("skipping the OpenAI Node SDK checks under the race detector: make test runs them in its plain go test")
	}
	modules := openAINodeModules(t)
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// ES modules resolve packages from the script's directory up: run a
	// copy beside a link to the cached node_modules.
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "scripts", "openai_node_check.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "check.mjs")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTinyServer(t)
	n := nodeCheckN
	if v, err := strconv.Atoi(os.Getenv("PITSTOP_OPENAI_NODE_N")); err == nil && v > 0 {
		n = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Env = append(os.Environ(), "PITSTOP_URL="+ts.http.URL, "PITSTOP_MODEL="+ts.rt.Model().Name(), "CHECK_N="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	t.Logf("openai_node_check.mjs, %d requests per check:\n%s", n, out)
	if err != nil {
		t.Fatalf("the OpenAI Node SDK checks failed: %v", err)
	}
}

// openAINodeModules returns the SDK's node_modules: $PITSTOP_OPENAI_NODE,
// else what scripts/fetch_openai_node.sh installs. It skips t when node or
// npm is missing or the registry cannot be reached, and fails it when the
// install fails otherwise.
func openAINodeModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("skipping: node is not installed (the OpenAI Node SDK runs on it)")
	}
	if dir, set := os.LookupEnv(envOpenAINode); set {
		if dir == "" {
			t.Skipf("skipping: $%s is empty: scripts/fetch_openai_node.sh could not install the OpenAI Node SDK (it needs npm and the npm registry)", envOpenAINode)
		}
		return dir
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("skipping: npm is not installed (scripts/fetch_openai_node.sh installs the OpenAI Node SDK with it)")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "fetch_openai_node.sh"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if unreachable(stderr.String()) || ctx.Err() != nil {
			t.Skipf("skipping: the npm registry is unreachable, the OpenAI Node SDK cannot be installed: %s", lastLine(stderr.String()))
		}
		t.Fatalf("scripts/fetch_openai_node.sh: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// unreachable reports whether npm's output says the network failed.
func unreachable(npmErr string) bool {
	for _, s := range []string{"ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET", "ENETUNREACH", "network"} {
		if strings.Contains(npmErr, s) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// moduleRoot walks up from the working directory to go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}
