// Package pitstop_test holds the test of the module's layers: which package
// may import which (docs/architecture.md explains the layers; DESIGN.md §2
// fixes the rule that dependencies point down).
package pitstop_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/pitstop-llm/pitstop"

// layer places a package, and the packages below it that have no entry of
// their own, in the stack.
type layer struct {
	path string // relative to the module
	rank int
	job  string
}

// layers is the stack, top first. A package may import a package of lower
// rank, or one in its own line (its ancestor or descendant that shares its
// rank, e.g. an unlisted engine/x and engine); never a package of higher
// rank, nor another of its rank (siblings stay independent: tools,
// predictor, the models packages and the policies know nothing of each
// other). A new top-level directory needs an entry: the test fails until it
// has one.
func layers() []layer {
	return []layer{
		{"cmd", 100, "the CLI: wires everything"},
		{"deploy", 96, "Kubernetes manifests and their schema check: no code"},
		{"examples", 95, "programs a user copies: clients and tool servers"},
		{"runtime/api", 90, "the HTTP server (OpenAI routes, /metrics): the only HTTP layer"},
		{"runtime", 85, "engine + tools + predictor + models, the program table, the interception loop"},
		{"runtime/internal/tracetest", 85, "the trace read back, for the tests of runtime and runtime/api: imported by tests only"},
		{"runtime/remote", 80, "backends the runtime does not run (vLLM, SGLang, llama.cpp, other pitstops)"},
		{"planner", 79, "SamuLLM planning on the simulator: offline"},
		{"bench", 78, "workload replay, drivers, metrics: offline, above the engine"},
		{"training", 78, "training kits (the tiny model's): offline, imported by the CLI only"},
		{"bench/workload/internal", 77, "programs that build the workloads' data"},
		{"cluster", 75, "many engines as a balancer sees them: no HTTP, no runtime"},
		{"bench/workload", 72, "workloads: trace loaders and program generators"},
		{"bench/workload/infercept", 71, "the InferCept trace format, as workloads and as predictor records"},
		{"bench/report", 71, "tables, CSV, JSON and plots of bench runs"},
		{"models/cpu", 60, "the CPU executor: an engine.Executor over models/llama"},
		{"runtime/testmodel", 58, "the scripted test model"},
		{"tools/mcp", 55, "MCP servers as tool sources, and tools served over MCP"},
		{"engine/policy", 50, "scheduling policies: they see the engine, not the services"},
		{"engine/sim", 50, "the simulated executor and cost profiles"},
		{"predictor", 50, "output-length and tool-duration prediction"},
		{"tools", 50, "the tool registry, validation and executor"},
		{"models/builtin", 50, "the built-in models' files"},
		{"models/chat", 50, "chat templates and tool-call parsers"},
		{"models/llama", 48, "Llama-family configurations and weights, the reference forward"},
		{"models/tokenizer", 45, "Hugging Face tokenizers"},
		{"models/kernel", 45, "matrix products on the CPU"},
		{"models/grammar", 45, "JSON Schema compiled to per-token masks (constrained decoding)"},
		{"predictor/onnxpb", 45, "the ONNX protobuf"},
		{"tools/calc", 45, "the calculator's expression evaluator"},
		{"models/safetensors", 44, "safetensors files"},
		{"models/gguf", 44, "GGUF files: metadata, tensor table, tensor data"},
		{"engine", 40, "the iteration engine: knows nothing of HTTP, tools, models or replicas"},
		{"kvswap", 20, "KV block tiers and their transfers"},
		{"handling", 20, "the waste of preserve, swap and discard: pure functions"},
		{"internal/dueheap", 15, "the min-heap the program tables expire from"},
		{"internal/jsondepth", 15, "encoding/json's nesting limit, for a decoder without one"},
		{"internal/testutil", 10, "helpers that several packages' tests share: imported by tests only"},
	}
}

// testOnly is the package, among those only tests may import, that pkg is
// in or below; "" when none.
func testOnly(pkg string) string {
	for _, h := range []string{"internal/testutil", "runtime/internal/tracetest"} {
		if pkg == h || strings.HasPrefix(pkg, h+"/") {
			return h
		}
	}
	return ""
}

// placed is a package's entry: the longest entry path that is the package
// or one of its ancestors.
func placed(table []layer, pkg string) (layer, bool) {
	var best layer
	found := false
	for _, l := range table {
		if (pkg == l.path || strings.HasPrefix(pkg, l.path+"/")) && (!found || len(l.path) > len(best.path)) {
			best, found = l, true
		}
	}
	return best, found
}

// inLine reports whether a and b are one package or ancestor and
// descendant.
func inLine(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// listedPackage is what go list -json says of a package.
type listedPackage struct {
	ImportPath string
	Imports    []string
}

// violations checks each package's imports against the table and returns
// one message per broken rule. Only what a package builds into programs
// counts: its tests may reach up (an engine/policy test replays a bench
// workload on the simulator) without coupling the packages.
func violations(table []layer, pkgs []listedPackage) []string {
	var out []string
	for _, p := range pkgs {
		from, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue // the module root's own test package
		}
		fl, ok := placed(table, from)
		if !ok {
			out = append(out, fmt.Sprintf("%s has no layer: add it to layers() in architecture_test.go and to docs/architecture.md", from))
			continue
		}
		seen := map[string]bool{}
		for _, imp := range p.Imports {
			to, ok := strings.CutPrefix(imp, module+"/")
			helper := testOnly(to) != "" && testOnly(from) != testOnly(to)
			if !ok || seen[to] || !helper && inLine(from, to) && rankOf(table, to) == fl.rank {
				continue
			}
			seen[to] = true
			tl, ok := placed(table, to)
			switch {
			case helper:
				out = append(out, fmt.Sprintf("%s imports %s, which is for tests only: import it from _test.go files", from, to))
			case !ok:
				out = append(out, fmt.Sprintf("%s imports %s, which has no layer: add it to layers() in architecture_test.go", from, to))
			case tl.rank > fl.rank:
				out = append(out, fmt.Sprintf("%s (rank %d, %s: %s) imports %s (rank %d, %s: %s), a layer above it: dependencies point down (DESIGN.md §2); move the shared code down or invert the dependency with an interface",
					from, fl.rank, fl.path, fl.job, to, tl.rank, tl.path, tl.job))
			case tl.rank == fl.rank:
				out = append(out, fmt.Sprintf("%s (rank %d, %s: %s) imports %s (rank %d, %s: %s), a sibling of its layer: siblings stay independent; move what both need below them",
					from, fl.rank, fl.path, fl.job, to, tl.rank, tl.path, tl.job))
			}
		}
	}
	return out
}

func rankOf(table []layer, pkg string) int {
	l, _ := placed(table, pkg)
	return l.rank
}

// goList lists the module's packages with their imports.
func goList(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages: not the module", len(pkgs))
	}
	return pkgs
}

// TestLayers fails when a package imports one above it in the stack, or a
// sibling of its layer, or when a package has no place in it.
func TestLayers(t *testing.T) {
	for _, v := range violations(layers(), goList(t)) {
		t.Error(v)
	}
}

// TestLayerRules checks the checker on made-up imports: each rule catches
// what it should and lets the rest through.
func TestLayerRules(t *testing.T) {
	pkg := func(path string, imports ...string) listedPackage {
		p := listedPackage{ImportPath: module + "/" + path}
		for _, i := range imports {
			p.Imports = append(p.Imports, module+"/"+i)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pkg  listedPackage
		want string // "" when allowed
	}{
		{"down", pkg("runtime", "engine", "models/cpu", "predictor", "tools"), ""},
		{"own line at one rank", pkg("engine/view", "engine"), ""},
		{"parent of an unlisted child", pkg("engine", "engine/view"), ""},
		{"up", pkg("engine", "runtime"), "engine (rank 40, engine: the iteration engine: knows nothing of HTTP, tools, models or replicas) imports runtime (rank 85"},
		{"predictor on bench", pkg("predictor", "bench/workload/infercept"), "predictor (rank 50, predictor: output-length and tool-duration prediction) imports bench/workload/infercept (rank 71"},
		{"serving on training", pkg("models/builtin", "training/tinytools"), "a layer above it"},
		{"sibling", pkg("engine/policy", "predictor"), "a sibling of its layer"},
		{"unplaced package", pkg("widgets", "engine"), "widgets has no layer"},
		{"future package placed", pkg("cluster", "engine", "predictor"), ""},
		{"program on a test helper", pkg("tools", "internal/testutil"), "internal/testutil, which is for tests only"},
		{"test helper on the stdlib only", pkg("internal/testutil"), ""},
		{"runtime on its tests' trace helper", pkg("runtime", "runtime/internal/tracetest"), "runtime/internal/tracetest, which is for tests only"},
		{"trace helper on the predictor", pkg("runtime/internal/tracetest", "predictor"), ""},
	} {
		got := violations(layers(), []listedPackage{tc.pkg})
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: violations %q, want none", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: violations %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}
