package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pitstop-llm/pitstop/predictor"
)

func newPredictorDurationsCmd() *cobra.Command {
	var (
		traces []string
		out    string
		eval   bool
	)
	cmd := &cobra.Command{
		Use:   "durations",
		Short: "Fit the per-tool duration estimator on trace records, or evaluate it (--eval)",
		Long: `durations fits the per-tool duration estimator on the trace records' tool calls and
prints its statistics (--out saves it for serve's --durations).

--eval instead replays the calls in trace order, prequentially (predict each call, then
learn it), and prints, for a per-tool running median (the baseline), the runtime's
per-tool estimator, the per-argument-class estimator that serve uses (a shell command's
program, a URL's host; the per-tool median is its floor) and a per-class running median,
the share of calls predicted within 2x of their measured duration and the median
|ln(predicted/actual)|, over all calls and over those that took 1 s or more. A tool's
first call is not scored.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(traces) == 0 {
				return usagef("predictor durations: --traces is required")
			}
			if eval && out != "" {
				return usagef("predictor durations: --out saves a fitted estimator; it does not go with --eval")
			}
			recs, err := predictor.ReadTraces(traces...)
			if err != nil {
				return err
			}
			stdout := cmd.OutOrStdout()
			if eval {
				ev := predictor.EvalDurations(recs)
				if ev.Calls == 0 {
					return fmt.Errorf("predictor durations: no record in %s has a tool duration", strings.Join(traces, ", "))
				}
				fmt.Fprintf(stdout, "calls %d (tools %d, argument classes %d), scored %d (a tool's first call is not)\n",
					ev.Calls, ev.Tools, ev.Classes, ev.Calls-ev.Cold)
				fmt.Fprintf(stdout, "%-38s %5s %10s %16s\n", "predictor", "n", "within-2x", "median|ln(p/a)|")
				for _, s := range ev.Scores {
					fmt.Fprintf(stdout, "%-38s %5d %9.1f%% %16.2f\n", s.Name, s.N, 100*s.Within2xRate(), s.MedianLogRatio)
				}
				fmt.Fprintf(stdout, "calls that took %g s or more:\n", predictor.LongCallSeconds)
				for _, s := range ev.LongScores {
					fmt.Fprintf(stdout, "  %-36s %5d %9.1f%% %16.2f\n", s.Name, s.N, 100*s.Within2xRate(), s.MedianLogRatio)
				}
				return nil
			}
			d := predictor.NewDurationEstimator(predictor.DurationOptions{})
			n := 0
			for _, r := range recs {
				if r.Tool != "" && r.ToolDurationS != nil {
					d.Observe(r.Tool, *r.ToolDurationS)
					n++
				}
			}
			if n == 0 {
				return fmt.Errorf("predictor durations: no record in %s has a tool duration", strings.Join(traces, ", "))
			}
			fmt.Fprintf(stdout, "%-14s %6s %10s %10s %10s\n", "tool", "n", "ewma_s", "p50_s", "p90_s")
			for _, t := range d.Tools() {
				s, _ := d.Stats(t)
				p50, _ := d.Quantile(t, 0.5)
				p90, _ := d.Quantile(t, 0.9)
				fmt.Fprintf(stdout, "%-14s %6d %10.4g %10.4g %10.4g\n", t, s.Count, s.EWMA, p50, p90)
			}
			if out != "" {
				if err := d.Save(out); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "wrote %s\n", out)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&traces, "traces", nil, "trace JSONL files")
	cmd.Flags().StringVar(&out, "out", "", "write the estimator as JSON")
	cmd.Flags().BoolVar(&eval, "eval", false, "prequential evaluation against a per-tool running median, within-2x rate")
	return cmd
}

func newPredictorConvertSWEAgentCmd() *cobra.Command {
	var source, out string
	cmd := &cobra.Command{
		Use:   "convert-swe-agent TRAJ...",
		Short: "Convert SWE-agent / mini-swe-agent trajectories into trace records with measured tool durations",
		Long: `convert-swe-agent writes one trace record per shell command of SWE-agent trajectories
(.traj, 1.0 or later: each step's execution_time) or mini-swe-agent trajectories (.traj.json,
2.0 or later: the time from a model response to its command's output, from their
timestamps): the command as the "command" argument of the shell tool and its measured wall
time as the tool duration, for 'predictor durations'. A trajectory's program is its file
name without .traj / .traj.json; files are read in the order given. --out ending in .gz is
gzip-compressed. mini-swe-agent records also carry each response's output and prompt tokens
(the model's own usage counts) and its inputs, for the length model ('predictor eval').`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			if out == "" || source == "" {
				return usagef("predictor convert-swe-agent: --out and --source are required")
			}
			var recs []predictor.TraceRecord
			seen := map[string]int{}
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				program := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".json"), ".traj")
				if seen[program]++; seen[program] > 1 {
					program = fmt.Sprintf("%s#%d", program, seen[program])
				}
				r, err := predictor.ConvertSWEAgent(data, source, program)
				if err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
				recs = append(recs, r...)
			}
			if err := predictor.WriteTraces(out, recs); err != nil {
				return err
			}
			timed := 0
			for _, r := range recs {
				if r.ToolDurationS != nil {
					timed++
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d records, %d timed tool calls, from %d trajectories\n", out, len(recs), timed, len(files))
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "", `the records' source, e.g. "swe-agent/demonstrations"`)
	cmd.Flags().StringVar(&out, "out", "", "output trace file (JSONL, .gz for gzip)")
	return cmd
}
