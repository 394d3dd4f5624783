package llama

import "strings"

// Tensor names and layout shared by the GGUF writer (gguf_write.go) and
// loader (gguf_load.go).

// GGUF names of the Hugging Face tensors: llama.cpp's, for the llama and
// qwen2 architectures.
func ggufName(hf string) string {
	switch hf {
	case "model.embed_tokens.weight":
		return "token_embd.weight"
	case "model.norm.weight":
		return "output_norm.weight"
	case "lm_head.weight":
		return "output.weight"
	}
	rest, ok := strings.CutPrefix(hf, "model.layers.")
	if !ok {
		return hf
	}
	n, rest, _ := strings.Cut(rest, ".")
	for from, to := range map[string]string{
		"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
		"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
		"self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
	} {
		if r, ok := strings.CutPrefix(rest, from+"."); ok {
			return "blk." + n + "." + to + "." + r
		}
	}
	return hf
}

// ggufArch is the GGUF architecture of a model type.
func ggufArch(modelType string) string {
	if modelType == "qwen2" {
		return "qwen2"
	}
	return "llama" // llama and mistral
}

// ropePermuted: llama.cpp's converter reorders the rows of Q and K of the
// llama architecture for its interleaved rotary embedding; qwen2 keeps
// Hugging Face's halves.
func ropePermuted(hf, arch string) (heads func(c *Config) int, ok bool) {
	if arch != "llama" || !strings.HasSuffix(hf, ".weight") && !strings.HasSuffix(hf, ".bias") {
		return nil, false
	}
	switch {
	case strings.Contains(hf, "q_proj"):
		return func(c *Config) int { return c.NumHeads }, true
	case strings.Contains(hf, "k_proj"):
		return func(c *Config) int { return c.NumKVHeads }, true
	}
	return nil, false
}

// permuteRows maps row r of Hugging Face's layout to its GGUF row: within
// each head, row s·half+i goes to 2i+s.
func permuteRows(rows, heads int) []int {
	hd := rows / heads
	half := hd / 2
	out := make([]int, rows)
	for h := range heads {
		for s := range 2 {
			for i := range half {
				out[h*hd+s*half+i] = h*hd + 2*i + s
			}
		}
	}
	return out
}

// isMatmul reports whether the tensor is a projection multiplied in the
// forward pass (quantized when the file quantizes).
func isMatmul(hf string) bool {
	return strings.HasSuffix(hf, "_proj.weight") || hf == "lm_head.weight"
}
