package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/bench/workload/infercept"
	"github.com/pitstop-llm/pitstop/predictor"
)

func init() { subcommands = append(subcommands, newPredictorCmd) }

// Model metadata keys the CLI adds, so that eval --heldout can redo the split.
const (
	metaSplit   = "pitstop.train.split"
	metaSeed    = "pitstop.train.seed"
	metaTraces  = "pitstop.train.traces"
	metaEpochs  = "pitstop.train.epochs"
	metaRecords = "pitstop.train.records"
	// metaMedian is the median output length of the training records: the
	// first-segment guess of a history baseline that knows only what the
	// model knew (eval on sources the model never saw).
	metaMedian = predictor.MetaTrainMedian
)

func newPredictorCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "predictor",
		Short: "Train, evaluate and inspect the pre-tool output-length classifier and tool-duration estimator",
		Long: `predictor works with the output-length classifier (an MLP over hashed text and
history features, 50 bins of 10 tokens + overflow, exported to ONNX and run with ONNX
Runtime) and the per-tool duration estimator.

  pitstop predictor convert --out traces.jsonl            # InferCept (embedded) + BFCL → trace records
  pitstop predictor train --traces traces.jsonl --out model.onnx
  pitstop predictor eval --model model.onnx --traces traces.jsonl --heldout --plot confusion.png
  pitstop predictor durations --traces traces.jsonl --out durations.json
  pitstop predictor convert-swe-agent --source swe-agent/x --out calls.jsonl run.traj
  pitstop predictor durations --traces calls.jsonl --eval    # within 2x vs a per-tool median`,
	}
	cmd.AddCommand(newPredictorConvertCmd(), newPredictorConvertChatCmd(), newPredictorTrainCmd(), newPredictorEvalCmd(), newPredictorDurationsCmd(), newPredictorConvertSWEAgentCmd())
	return cmd
}

func newPredictorConvertCmd() *cobra.Command {
	var inferceptSet, inferceptFile, bfclDir, out string
	cmd := &cobra.Command{
		Use:   "convert",
		Short: "Convert the InferCept and BFCL traces into predictor trace records (JSONL)",
		Long: `convert writes one trace record per call segment.

--infercept multi|single|none uses the InferCept set embedded in bench/workload, with
its GPT-2 BPE token counts; --infercept-file reads an InferCept-format JSON instead
(text is then counted with GPT-2's BPE, r50k_base). --bfcl reads the BFCL subset laid
out as predictor/data/bfcl (prompts and schemas; the pre-tool output is the ground-truth
call JSON; tokens counted with GPT-2's BPE, r50k_base).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("predictor convert: --out is required")
			}
			var recs []predictor.TraceRecord
			switch {
			case inferceptFile != "":
				data, err := os.ReadFile(inferceptFile)
				if err != nil {
					return err
				}
				r, err := infercept.TraceRecords(data, infercept.RecordOptions{Source: "infercept-file"})
				if err != nil {
					return fmt.Errorf("%s: %w", inferceptFile, err)
				}
				recs = append(recs, r...)
			case inferceptSet == "multi" || inferceptSet == "single":
				r, err := convertEmbeddedInfercept(inferceptSet == "multi")
				if err != nil {
					return err
				}
				recs = append(recs, r...)
			case inferceptSet == "none":
			default:
				return usagef("predictor convert: --infercept %q: want multi, single or none", inferceptSet)
			}
			if bfclDir != "" {
				r, err := predictor.ConvertBFCLDir(bfclDir, nil, nil)
				if err != nil {
					return err
				}
				recs = append(recs, r...)
			}
			if len(recs) == 0 {
				return usagef("predictor convert: nothing to convert (--infercept none and no --bfcl)")
			}
			predictor.DeriveContext(recs)
			if err := predictor.WriteTraces(out, recs); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d trace records to %s\n", len(recs), out)
			writeSourceCounts(cmd.OutOrStdout(), recs)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&inferceptSet, "infercept", "multi", "embedded InferCept set: multi, single or none")
	fl.StringVar(&inferceptFile, "infercept-file", "", "an InferCept-format JSON file to convert instead of the embedded set")
	fl.StringVar(&bfclDir, "bfcl", "", "directory of BFCL files (e.g. predictor/data/bfcl)")
	fl.StringVar(&out, "out", "", "output JSONL file")
	return cmd
}

// convertEmbeddedInfercept pairs the embedded InferCept text (for the
// messages) with bench/workload's tokenizer counts of the same segments.
func convertEmbeddedInfercept(multi bool) ([]predictor.TraceRecord, error) {
	raw, err := workload.InferceptRaw(multi)
	if err != nil {
		return nil, err
	}
	w, err := workload.LoadInfercept(multi, workload.InferceptOptions{KeepTrailingTools: true})
	if err != nil {
		return nil, err
	}
	counts := map[string]infercept.RequestCounts{}
	for _, p := range w.Programs {
		if len(p.Calls) != 1 {
			return nil, fmt.Errorf("infercept program %s has %d calls, want 1", p.ID, len(p.Calls))
		}
		c := p.Calls[0]
		rc := infercept.RequestCounts{Prompt: c.NewTokens}
		for _, s := range c.Segments {
			rc.Segments = append(rc.Segments, infercept.SegmentCounts{Output: s.Decode, ToolReturn: s.ToolReturn})
		}
		counts[p.ID] = rc
	}
	source := "infercept-single"
	if multi {
		source = "infercept-multi"
	}
	return infercept.TraceRecords(raw, infercept.RecordOptions{Source: source, Counts: counts})
}

func writeSourceCounts(w io.Writer, recs []predictor.TraceRecord) {
	by := map[string]int{}
	for _, r := range recs {
		by[r.Source]++
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-32s %5d\n", k, by[k])
	}
}

func newPredictorTrainCmd() *cobra.Command {
	var (
		traces []string
		out    string
		opt    predictor.TrainOptions
		seed   uint64
		split  float64
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train the output-length classifier on trace records and export it to ONNX",
		Long: `train splits the records by program (--split of the programs for training, the rest
held out), trains the MLP in Go (Adam, softmax cross-entropy, deterministic seed),
exports it to ONNX and prints its held-out metrics. --split 1 trains on everything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(traces) == 0 || out == "" {
				return usagef("predictor train: --traces and --out are required")
			}
			if !(split > 0 && split <= 1) {
				return usagef("predictor train: --split %v: want a fraction in (0, 1]", split)
			}
			if opt.Epochs < 0 || opt.Hidden < 0 || opt.BatchSize < 0 || opt.LR < 0 {
				return usagef("predictor train: --epochs, --hidden, --batch and --lr must not be negative")
			}
			recs, err := predictor.ReadTraces(traces...)
			if err != nil {
				return err
			}
			train, test := recs, []predictor.TraceRecord(nil)
			if split < 1 {
				if train, test, err = predictor.SplitTraces(recs, split, seed); err != nil {
					return err
				}
			}
			stdout := cmd.OutOrStdout()
			fmt.Fprintf(stdout, "%d records: %d training, %d held out (split %.2f by program, seed %d)\n", len(recs), len(train), len(test), split, seed)
			opt.Seed = seed
			opt.Progress = func(epoch int, loss float64) {
				if epoch == 0 || (epoch+1)%10 == 0 {
					fmt.Fprintf(stdout, "  epoch %3d  loss %.4f\n", epoch+1, loss)
				}
			}
			mlp, overflow, err := predictor.TrainLengthModel(train, opt)
			if err != nil {
				return err
			}
			epochs := opt.Epochs
			if epochs == 0 {
				epochs = 60
			}
			meta := map[string]string{
				metaSplit:   strconv.FormatFloat(split, 'g', -1, 64),
				metaSeed:    strconv.FormatUint(seed, 10),
				metaTraces:  strings.Join(traces, ","),
				metaEpochs:  strconv.Itoa(epochs),
				metaRecords: strconv.Itoa(len(train)),
				metaMedian:  strconv.Itoa(predictor.MedianTokens(train)),
			}
			data, err := predictor.MarshalONNX(mlp, overflow, meta)
			if err != nil {
				return err
			}
			if err := writeFile(out, data); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s (%d bytes, %d→%d→%d, overflow bin predicts %d tokens)\n", out, len(data), mlp.In, mlp.Hidden, mlp.Out, overflow)
			if len(test) > 0 {
				g := predictor.GoClassifier{MLP: mlp, OverflowTokens: overflow}
				pred, _ := predictor.PredictAll(g, test)
				rep, err := predictor.Evaluate(pred, test)
				if err != nil {
					return err
				}
				rep.WriteSummary(stdout, "held out (Go forward)")
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&traces, "traces", nil, "trace JSONL files (comma-separated or repeated)")
	fl.StringVar(&out, "out", "", "ONNX model to write")
	fl.IntVar(&opt.Epochs, "epochs", 60, "training epochs")
	fl.IntVar(&opt.Hidden, "hidden", 64, "hidden units")
	fl.IntVar(&opt.BatchSize, "batch", 32, "minibatch size")
	fl.Float64Var(&opt.LR, "lr", 1e-3, "Adam learning rate")
	fl.Uint64Var(&seed, "seed", 1, "seed for the split, initialisation and shuffling")
	fl.Float64Var(&split, "split", 0.8, "fraction of programs used for training")
	return cmd
}

func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func newPredictorEvalCmd() *cobra.Command {
	var (
		model, plot string
		traces      []string
		heldout     bool
		perBin      bool
		online      bool
		curve       string
		curvePNG    string
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate a length model on trace records: Acc-5, Acc-15, MAE, per-bin accuracy, confusion plot",
		Long: `eval runs the model (in ONNX Runtime; in Go if the runtime library is missing) over the
records and prints LAMPS's metrics: Acc-k = share of predictions within k tokens of the
actual length (LAMPS §5 counts words), MAE in tokens and in bins, exact-bin accuracy, the
per-bin table (LAMPS Table 3), per-source lines and two baselines (the program's mean
output so far; the training median). --heldout keeps only the records the model's own
training split held out (split and seed are in its metadata).

--online replays the records in trace order through the online learner serve uses
(predictor.OnlineLength, starting from --model): each record is predicted, then learnt
from (prequential evaluation). The "model, online" line scores those predictions, the
"model, not learning" line the same model without learning; "+ order mix" is what serve
predicts before the window mode. "window mode by class" predicts, from the lengths finished before,
the centre of the densest 11-token window in the record's class (the tool it resumes
after and its call's argument class, the previous output's and the last message's log2 sizes): the point that maximises
Acc-5, for comparison (predictor.WindowModes); the second half adds each line's rank
correlation with the actual lengths, which a policy that ranks by the point needs.
"order mix or mode, by order" predicts with the window mode where it has ordered the
finished segments better than the order mix so far, else with the mix (predictor.OrderLed):
what serve predicts with, replayed by the same code (predictor.ModeLed). --curve writes the running
MAE (online, not learning, history) every 50 records as CSV.

The "+ program blend" line combines the model's predictions, per program, with the
program's mean output so far (after the same last tool, where the program had one),
weighted by how well each did on the program's earlier segments (predictor.ProgramBlend).
The "+ blend + mix" lines mix that blend with the history baseline, weighted by the
absolute errors of each on the segments replayed before (first segments and later ones
apart; predictor.ExpertMix): the shipped model's weights are not changed, but the mixture
learns across programs. The "+ order mix" line weighs the same experts by how often they
ordered pairs of finished segments wrongly, its point on later segments reading the
model's distribution widened to the error the model has shown on the later segments
replayed before, while another expert has shown less (predictor.ServedMix): what serve and
bench predict with, since policies rank by the prediction. The "+ order mix, point not
calibrated" and "mix or mode, point not calibrated" lines are the same without the
widening (serve's before session 16).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if model == "" || len(traces) == 0 {
				return usagef("predictor eval: --model and --traces are required")
			}
			if (curve != "" || curvePNG != "") && !online {
				return usagef("predictor eval: --curve and --curve-png need --online")
			}
			data, err := os.ReadFile(model)
			if err != nil {
				return err
			}
			info, err := predictor.ParseONNX(data)
			if err != nil {
				return fmt.Errorf("%s: %w", model, err)
			}
			recs, err := predictor.ReadTraces(traces...)
			if err != nil {
				return err
			}
			train := recs
			if heldout {
				split, err1 := strconv.ParseFloat(info.Metadata[metaSplit], 64)
				seed, err2 := strconv.ParseUint(info.Metadata[metaSeed], 10, 64)
				if err1 != nil || err2 != nil || !(split > 0 && split < 1) {
					return usagef("predictor eval: --heldout: %s has no training split in its metadata (trained with --split 1 or by another tool)", model)
				}
				if train, recs, err = predictor.SplitTraces(recs, split, seed); err != nil {
					return err
				}
			}
			stdout := cmd.OutOrStdout()
			var p predictor.LengthPredictor
			m, err := predictor.LoadModelBytes(data)
			switch {
			case err == nil:
				defer m.Close()
				p = m
			case errors.Is(err, predictor.ErrORTMissing) && info.MLP != nil:
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %v; evaluating with the Go forward pass\n", err)
				p = predictor.GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}
			default:
				return fmt.Errorf("%s: %w", model, err)
			}
			pred, err := predictor.PredictAll(p, recs)
			if err != nil {
				return err
			}
			rep, err := predictor.Evaluate(pred, recs)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "model %s (feature version %d, overflow bin = %d tokens), %d records%s\n",
				model, info.FeatureVersion, info.OverflowTokens, len(recs), map[bool]string{true: " held out", false: ""}[heldout])
			coldProbs := make([][]float32, len(recs))
			for i := range recs {
				_, coldProbs[i] = p.PredictLength(recs[i].Input)
			}
			coldBlend, err := predictor.Evaluate(predictor.BlendByProgram(pred, coldProbs, info.OverflowTokens, recs, nil), recs)
			if err != nil {
				return err
			}
			coldExperts := predictor.NewExpertMix(predictor.TrainMedian(info))
			coldMix, err := predictor.Evaluate(predictor.BlendByProgram(pred, coldProbs, info.OverflowTokens, recs, coldExperts), recs)
			if err != nil {
				return err
			}
			coldOrdered := predictor.BlendByProgram(pred, coldProbs, info.OverflowTokens, recs,
				predictor.ServedMix(predictor.TrainMedian(info)))
			orderMix, err := predictor.Evaluate(coldOrdered, recs)
			if err != nil {
				return err
			}
			// Before session 16: the point not read at the model's shown spread.
			coldPlain := predictor.BlendByProgram(pred, coldProbs, info.OverflowTokens, recs,
				predictor.OrderScored(predictor.TrainMedian(info)))
			plainMix, err := predictor.Evaluate(coldPlain, recs)
			if err != nil {
				return err
			}
			coldRanks := fmt.Sprintf("rank correlation (Spearman), all records, not learning: model %.3f; model + order mix %.3f; point not calibrated %.3f\n",
				predictor.RankCorrelation(pred, recs), predictor.RankCorrelation(coldOrdered, recs), predictor.RankCorrelation(coldPlain, recs))
			if online {
				cold := rep
				var probs [][]float32
				if pred, probs, err = prequential(p, info, recs, curve, curvePNG); err != nil {
					return err
				}
				if rep, err = predictor.Evaluate(pred, recs); err != nil {
					return err
				}
				blended := predictor.BlendByProgram(pred, probs, info.OverflowTokens, recs,
					predictor.NewExpertMix(predictor.TrainMedian(info)))
				onlineBlend, err := predictor.Evaluate(blended, recs)
				if err != nil {
					return err
				}
				// What serve predicts with, by the code it predicts with.
				ordered, modes, led := predictor.ServedPoints(pred, probs, info.OverflowTokens, recs, predictor.TrainMedian(info))
				// The same step before session 16: its mixture's point not
				// read at the model's shown spread.
				plainStep := predictor.ServedStep{Mix: predictor.OrderScored(predictor.TrainMedian(info)),
					Led: predictor.NewModeLed(predictor.TrainMedian(info))}
				var plainLed []int
				for _, pt := range predictor.ReplayServed(plainStep, pred, probs, info.OverflowTokens, recs) {
					plainLed = append(plainLed, pt.Point)
				}
				plainLedRep, err := predictor.Evaluate(plainLed, recs)
				if err != nil {
					return err
				}
				onlineOrder, err := predictor.Evaluate(ordered, recs)
				if err != nil {
					return err
				}
				modeRep, err := predictor.Evaluate(modes, recs)
				if err != nil {
					return err
				}
				ledRep, err := predictor.Evaluate(led, recs)
				if err != nil {
					return err
				}
				rep.WriteSummary(stdout, "model, online")
				onlineBlend.WriteSummary(stdout, "model, online + mix")
				onlineOrder.WriteSummary(stdout, "model, online + order mix")
				modeRep.WriteSummary(stdout, "window mode by class")
				ledRep.WriteSummary(stdout, "order mix or mode, by order")
				plainLedRep.WriteSummary(stdout, "order mix or mode, point not calibrated")
				cold.WriteSummary(stdout, "model, not learning")
				halves := []secondHalfLine{{"  online", pred}, {"  online + mix", blended},
					{"  online + order mix", ordered}, {"  window mode by class", modes}, {"  mix or mode, by order", led},
					{"  mix or mode, point not calibrated", plainLed}}
				if err := writeSecondHalf(stdout, halves, recs, predictor.MedianTokens(train)); err != nil {
					return err
				}
			} else {
				rep.WriteSummary(stdout, "model")
			}
			coldBlend.WriteSummary(stdout, "model + program blend")
			coldMix.WriteSummary(stdout, "model + blend + mix")
			orderMix.WriteSummary(stdout, "model + order mix")
			plainMix.WriteSummary(stdout, "model + order mix, point not calibrated")
			fmt.Fprint(stdout, coldRanks)
			writeExpertErrors(stdout, coldExperts)
			med := predictor.MedianTokens(train)
			for _, b := range []struct {
				name string
				p    predictor.LengthPredictor
			}{
				{"baseline: history", predictor.HistoryPredictor{Default: med}},
				{"baseline: median", constPredictor(med)},
			} {
				bpred, _ := predictor.PredictAll(b.p, recs)
				brep, err := predictor.Evaluate(bpred, recs)
				if err != nil {
					return err
				}
				brep.WriteSummary(stdout, b.name)
			}
			if m, err := strconv.Atoi(info.Metadata[metaMedian]); err == nil && !heldout {
				// The history baseline above starts each program at the
				// median of the records evaluated, which a deployment does
				// not know; this one starts at the model's training median.
				bpred, _ := predictor.PredictAll(predictor.HistoryPredictor{Default: m}, recs)
				brep, err := predictor.Evaluate(bpred, recs)
				if err != nil {
					return err
				}
				brep.WriteSummary(stdout, "baseline: history, training median start")
			}
			bySource := map[string][]int{}
			for i, r := range recs {
				bySource[r.Source] = append(bySource[r.Source], i)
			}
			sources := make([]string, 0, len(bySource))
			for s := range bySource {
				sources = append(sources, s)
			}
			slices.Sort(sources)
			for _, s := range sources {
				idx := bySource[s]
				sp, sr := make([]int, len(idx)), make([]predictor.TraceRecord, len(idx))
				for j, i := range idx {
					sp[j], sr[j] = pred[i], recs[i]
				}
				srep, _ := predictor.Evaluate(sp, sr)
				srep.WriteSummary(stdout, "  "+s)
			}
			if perBin {
				fmt.Fprintln(stdout)
				rep.WritePerBin(stdout)
			}
			if plot != "" {
				if err := rep.WriteConfusionPNG(plot); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "wrote %s\n", plot)
			}
			for _, f := range []string{curve, curvePNG} {
				if f != "" {
					fmt.Fprintf(stdout, "wrote %s\n", f)
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&model, "model", "", "ONNX length model")
	fl.StringSliceVar(&traces, "traces", nil, "trace JSONL files (comma-separated or repeated)")
	fl.StringVar(&plot, "plot", "", "write the confusion matrix as a PNG heat map")
	fl.BoolVar(&heldout, "heldout", false, "evaluate only the records the model's training split held out")
	fl.BoolVar(&perBin, "per-bin", true, "print per-bin accuracy")
	fl.BoolVar(&online, "online", false, "prequential: predict each record, then learn from it, in trace order")
	fl.StringVar(&curve, "curve", "", "with --online: write the prequential MAE curve as CSV")
	fl.StringVar(&curvePNG, "curve-png", "", "with --online: draw the prequential MAE curves as a PNG")
	return cmd
}

type constPredictor int

func (c constPredictor) PredictLength(predictor.Input) (int, []float32) { return int(c), nil }
