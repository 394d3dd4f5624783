package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pitstop-llm/pitstop/models/gguf"
	"github.com/pitstop-llm/pitstop/runtime"
)

func init() { subcommands = append(subcommands, newConvertCmd) }

var ggufQuants = map[string]gguf.TensorType{"f32": gguf.F32, "f16": gguf.F16, "q8_0": gguf.Q8_0, "q4_0": gguf.Q4_0}

func newConvertCmd() *cobra.Command {
	var model, to, quant, out string
	cmd := &cobra.Command{
		Use:   "convert",
		Short: "Write a model as a GGUF file, or a GGUF file as a Hugging Face directory",
		Long: `convert --to gguf writes a model (builtin:NAME or a Hugging Face directory) as
a GGUF file in llama.cpp's layout: the weights (projections and embedding in
--quant, norms in F32), the configuration, the tokenizer and the chat template,
so that "pitstop serve --model FILE.gguf" and llama.cpp can read it.

convert --to hf writes a GGUF file as a Hugging Face directory in float32, its
quantized weights dequantized: the weights the quantized model computes with,
for tools that read directories (eval-tiny).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "hf" {
				if !strings.HasSuffix(strings.ToLower(model), ".gguf") || out == "" {
					return usagef("--to hf converts a --model FILE.gguf into the directory --out")
				}
				if err := runtime.GGUFToHF(model, out); err != nil {
					return usageError{err.Error()}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s from %s\n", out, model)
				return nil
			}
			if to != "gguf" {
				return usagef("--to %q: want gguf or hf", to)
			}
			qt, ok := ggufQuants[strings.ToLower(quant)]
			if !ok {
				return usagef("--quant %q: want f32, f16, q8_0 or q4_0", quant)
			}
			if out == "" {
				return usagef("--out FILE.gguf is required")
			}
			m, err := runtime.LoadWeightsModel(model, runtime.WeightsOptions{})
			if err != nil {
				return usageError{err.Error()}
			}
			if err := runtime.WriteGGUF(m, out, qt); err != nil {
				return err
			}
			st, err := os.Stat(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%s, %.1f MB) from %s\n", out, strings.ToUpper(quant), float64(st.Size())/1e6, filepath.Clean(model))
			return nil
		},
	}
	cmd.Flags().StringVar(&model, "model", "builtin:tiny-tools", "model to convert: builtin:NAME or a Hugging Face model directory (--to gguf), a FILE.gguf (--to hf)")
	cmd.Flags().StringVar(&to, "to", "gguf", "output format: gguf, or hf (a GGUF file as a Hugging Face directory)")
	cmd.Flags().StringVar(&quant, "quant", "q8_0", "type of the projections and the embedding: f32, f16, q8_0, q4_0")
	cmd.Flags().StringVarP(&out, "out", "o", "", "output file (--to gguf) or directory (--to hf)")
	return cmd
}
