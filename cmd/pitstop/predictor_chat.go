package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/spf13/cobra"

	"github.com/pitstop-llm/pitstop/predictor"
)

func newPredictorConvertChatCmd() *cobra.Command {
	var tau, toolbench, source, encoding, out string
	var searchTree, unanswered bool
	cmd := &cobra.Command{
		Use:   "convert-chat",
		Short: "Convert public agent trajectories (tau-bench, ToolBench) into predictor trace records",
		Long: `convert-chat writes one trace record per assistant message of OpenAI-style agent
trajectories, its tokens counted with the producing model's tokenizer (--encoding, a
tiktoken encoding: o200k_base for gpt-4o, cl100k_base for gpt-3.5/gpt-4; ranks built in,
no network). --tau reads a tau-bench historical-trajectory JSON; --toolbench a directory
of ToolBench answer files (*.json, searched recursively); with --search-tree, every turn
of each answer file's depth-first search (branches given up on too), not only the path
that answered; with --unanswered as well, only the files whose search never answered,
their prompt rebuilt from the query (an evaluation-only source). --out ending in .gz is
gzip-compressed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" || source == "" || (tau == "") == (toolbench == "") {
				return usagef("predictor convert-chat: --out, --source and one of --tau or --toolbench are required")
			}
			if searchTree && toolbench == "" {
				return usagef("predictor convert-chat: --search-tree needs --toolbench")
			}
			if unanswered && !searchTree {
				return usagef("predictor convert-chat: --unanswered needs --search-tree")
			}
			count, err := tiktokenCounter(encoding)
			if err != nil {
				return err
			}
			var trajs []predictor.ChatTrajectory
			var treeRecs []predictor.TraceRecord
			if tau != "" {
				data, err := os.ReadFile(tau)
				if err != nil {
					return err
				}
				if trajs, err = predictor.ParseTauBench(data); err != nil {
					return fmt.Errorf("%s: %w", tau, err)
				}
			} else {
				var files []string
				err := filepath.WalkDir(toolbench, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
						files = append(files, p)
					}
					return err
				})
				if err != nil {
					return err
				}
				slices.Sort(files)
				for _, f := range files {
					data, err := os.ReadFile(f)
					if err != nil {
						return err
					}
					rel, _ := filepath.Rel(toolbench, f)
					id := strings.TrimSuffix(rel, ".json")
					if searchTree {
						convert := predictor.ConvertToolBenchTree
						if unanswered {
							convert = predictor.ConvertToolBenchTreeUnanswered
						}
						recs, err := convert(data, id, source, count)
						if errors.Is(err, predictor.ErrNoTrajectory) {
							fmt.Fprintf(cmd.ErrOrStderr(), "skipping %s: %v\n", f, err)
							continue
						}
						if err != nil {
							return err
						}
						treeRecs = append(treeRecs, recs...)
						trajs = append(trajs, predictor.ChatTrajectory{ID: id})
						continue
					}
					t, err := predictor.ParseToolBenchAnswer(data, id)
					if errors.Is(err, predictor.ErrNoTrajectory) {
						fmt.Fprintf(cmd.ErrOrStderr(), "skipping %s: %v\n", f, err)
						continue
					}
					if err != nil {
						return err
					}
					trajs = append(trajs, t)
				}
			}
			recs := treeRecs
			if !searchTree {
				if recs, err = predictor.ConvertChat(trajs, source, count); err != nil {
					return err
				}
			}
			if err := predictor.WriteTraces(out, recs); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d trace records of %d trajectories to %s\n", len(recs), len(trajs), out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&tau, "tau", "", "a tau-bench historical-trajectory JSON file")
	fl.StringVar(&toolbench, "toolbench", "", "a directory of ToolBench answer JSON files")
	fl.BoolVar(&searchTree, "search-tree", false, "with --toolbench: every turn of each file's search tree, not only the answering path")
	fl.BoolVar(&unanswered, "unanswered", false, "with --search-tree: only the files whose search never answered (no train_messages), their prompt rebuilt from the query; the others are skipped")
	fl.StringVar(&source, "source", "", "source name written in the records, e.g. tau-airline/gpt-4o")
	fl.StringVar(&encoding, "encoding", "o200k_base", "tiktoken encoding of the producing model: o200k_base, cl100k_base, p50k_base, r50k_base")
	fl.StringVar(&out, "out", "", "output JSONL file (.gz: compressed)")
	return cmd
}

// tiktokenCounter counts tokens with a tiktoken encoding whose ranks come
// from tiktoken-go-loader's embedded files (no download).
func tiktokenCounter(encoding string) (func(string) int, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		return nil, usagef("--encoding %q: %v (valid: o200k_base, cl100k_base, p50k_base, r50k_base)", encoding, err)
	}
	return func(s string) int { return len(enc.EncodeOrdinary(s)) }, nil
}
