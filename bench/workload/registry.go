package workload

import (
	"fmt"
	"slices"
	"strings"
)

// loaders maps each workload name of DESIGN.md §7 to its loader. Trace workloads ignore the
// seed: they are the trace.
var loaders = map[string]func(seed int64) (*Workload, error){
	"infercept-multi":  func(int64) (*Workload, error) { return InferceptMulti() },
	"infercept-single": func(int64) (*Workload, error) { return InferceptSingle() },
	"chat":             Chat,
	"react":            React,
	"mcts":             MCTS,
	"mixed":            Mixed,
	"coding":           Coding,
	"fanout":           Fanout,
	"mooncake-conv":    func(int64) (*Workload, error) { return MooncakeConv() },
	"azure-conv":       func(int64) (*Workload, error) { return AzureConv() },
	"azure-code":       func(int64) (*Workload, error) { return AzureCode() },
}

// Names returns the valid workload names, sorted.
func Names() []string {
	names := make([]string, 0, len(loaders))
	for n := range loaders {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Load returns the named workload. The seed fixes the synthetic ones (chat, react, mcts,
// mixed); the trace ones ignore it. Each call builds a fresh workload the caller may modify.
func Load(name string, seed int64) (*Workload, error) {
	f, ok := loaders[name]
	if !ok {
		return nil, fmt.Errorf("unknown workload %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	return f(seed)
}

// Options are the distributions of the families that take them (coding,
// fanout); nil means the family's defaults.
type Options struct {
	Coding *CodingOptions
	Fanout *FanoutOptions
}

// LoadWith is Load with o's distributions for the families that take them.
func LoadWith(name string, seed int64, o Options) (*Workload, error) {
	switch {
	case name == "coding" && o.Coding != nil:
		return CodingWith(seed, *o.Coding)
	case name == "fanout" && o.Fanout != nil:
		return FanoutWith(seed, *o.Fanout)
	}
	return Load(name, seed)
}
