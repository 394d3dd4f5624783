// Package mcptest gives tests the npm MCP packages they run against (the
// reference server @modelcontextprotocol/server-everything and the MCP
// Inspector), installed by scripts/fetch_mcp.sh into a cache at pinned
// versions. A test that needs them and cannot have them (npm or its
// registry unreachable) is skipped with a message that says so. It also
// gives them an MCP client session to a server under test (client.go).
package mcptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvBin names the directory of the packages' executables
// (node_modules/.bin), as the Makefile sets it from scripts/fetch_mcp.sh;
// set and empty, it says the script failed (the tests skip without trying
// again).
const EnvBin = "PITSTOP_MCP_BIN"

// Executables of the packages.
const (
	Everything = "mcp-server-everything"
	Inspector  = "mcp-inspector"
)

// installTimeout bounds a first install (about 150 MB from npm).
const installTimeout = 5 * time.Minute

var (
	once   sync.Once
	binDir string
	binErr error
)

// Bin returns the path of executable name of the installed packages, or
// skips t when they cannot be installed. It uses $PITSTOP_MCP_BIN, else runs
// scripts/fetch_mcp.sh once per process.
func Bin(t testing.TB, name string) string {
	t.Helper()
	once.Do(func() { binDir, binErr = locate() })
	if binErr != nil {
		t.Skipf("skipping: the npm MCP packages are not installed: %v (scripts/fetch_mcp.sh installs them; it needs npm and the npm registry)", binErr)
	}
	p := filepath.Join(binDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v ($%s=%s)", name, err, EnvBin, binDir)
	}
	return p
}

func locate() (string, error) {
	if dir, set := os.LookupEnv(EnvBin); set {
		if dir == "" { // the Makefile ran the script and it failed
			return "", fmt.Errorf("$%s is empty: scripts/fetch_mcp.sh could not install them", EnvBin)
		}
		return dir, nil
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", errors.New("node is not installed")
	}
	script, err := findScript()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %v: %s", script, err, lastLine(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// findScript walks up from the working directory to the module root.
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "scripts", "fetch_mcp.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("scripts/fetch_mcp.sh not found above the working directory")
		}
		dir = parent
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
