package llama

import (
	"slices"
	"strings"
)

// builtins are model shapes for benchmarks without a checkpoint (dummy
// weights): Llama-3-style configurations with tied embeddings.
var builtins = map[string]Config{
	// ~100M parameters: d 768, 12 layers, 12 query and 4 KV heads of 64, MLP 2048, vocabulary 32000.
	"llama-100m": {
		Architecture: "LlamaForCausalLM", ModelType: "llama",
		HiddenSize: 768, IntermediateSize: 2048, NumLayers: 12, NumHeads: 12, NumKVHeads: 4, HeadDim: 64,
		VocabSize: 32000, MaxPositions: 8192, RMSNormEps: 1e-5, RopeTheta: 500000, TieEmbeddings: true, BOSTokenID: -1,
	},
	// ~4.6M parameters: d 256, 4 layers, 8 query and 4 KV heads of 32, MLP 768, vocabulary 4096.
	"llama-5m": {
		Architecture: "LlamaForCausalLM", ModelType: "llama",
		HiddenSize: 256, IntermediateSize: 768, NumLayers: 4, NumHeads: 8, NumKVHeads: 4, HeadDim: 32,
		VocabSize: 4096, MaxPositions: 8192, RMSNormEps: 1e-5, RopeTheta: 10000, TieEmbeddings: true, BOSTokenID: -1,
	},
}

// Builtin returns a built-in model shape by name (see BuiltinNames); it has
// no weights: load it with NewDummy.
func Builtin(name string) (Config, bool) {
	c, ok := builtins[name]
	return c, ok
}

// BuiltinNames lists the built-in model shapes.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// BuiltinHelp is a one-line list of the built-in shapes, for flag help.
func BuiltinHelp() string { return strings.Join(BuiltinNames(), ", ") }
