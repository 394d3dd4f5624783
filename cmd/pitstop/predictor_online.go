package main

import (
	"bufio"
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"strings"

	"github.com/pitstop-llm/pitstop/predictor"
)

// curveEvery is how many records pass between points of the --curve CSV.
const curveEvery = 50

// prequential replays recs in order through an online learner that starts
// from base (the model info describes): each record is predicted, then
// learnt from. It returns the predictions and, when curvePath is set, writes
// the running MAE of the learner, of base without learning and of the
// history baseline, and of the learner's predictions blended per program
// and mixed with the history baseline as serve does
// (predictor.BlendByProgram with an ExpertMix). It also returns each
// prediction's distribution.
func prequential(base predictor.LengthPredictor, info *predictor.ModelInfo, recs []predictor.TraceRecord, curvePath, pngPath string) ([]int, [][]float32, error) {
	if info.MLP == nil {
		return nil, nil, errors.New("predictor eval --online: the model's graph is not the plain MLP the learner updates")
	}
	o, err := predictor.NewOnlineLength(base, info.MLP, info.OverflowTokens, predictor.OnlineOptions{})
	if err != nil {
		return nil, nil, err
	}
	curves := []predictor.Curve{
		{Name: "online", Colour: color.RGBA{200, 30, 30, 255}},
		{Name: "not learning", Colour: color.RGBA{30, 60, 200, 255}},
		{Name: "history", Colour: color.RGBA{120, 120, 120, 255}},
		{Name: "online + mix", Colour: color.RGBA{230, 140, 0, 255}},
	}
	var w *bufio.Writer
	if curvePath != "" {
		f, err := os.Create(curvePath)
		if err != nil {
			return nil, nil, fmt.Errorf("curve: %w", err)
		}
		defer f.Close()
		w = bufio.NewWriter(f)
		fmt.Fprintln(w, "segments,mae_online,mae_not_learning,mae_history,mae_online_blend")
	}
	hist := predictor.HistoryPredictor{Default: predictor.MedianTokens(recs)}
	pred := make([]int, len(recs))
	probs := make([][]float32, len(recs))
	var sumOnline, sumCold, sumHist, sumBlend float64
	blends := predictor.NewProgramBlends(predictor.NewExpertMix(predictor.TrainMedian(info)))
	for i, r := range recs {
		pred[i], probs[i] = o.PredictLength(r.Input)
		if w != nil || pngPath != "" {
			sumBlend += absf(blends.Predict(r, pred[i], probs[i], info.OverflowTokens) - r.PreToolOutputTokens)
			blends.Observe(r, pred[i], probs[i], info.OverflowTokens)
			cold, _ := base.PredictLength(r.Input)
			h, _ := hist.PredictLength(r.Input)
			sumOnline += absf(pred[i] - r.PreToolOutputTokens)
			sumCold += absf(cold - r.PreToolOutputTokens)
			sumHist += absf(h - r.PreToolOutputTokens)
			if n := i + 1; n%curveEvery == 0 || n == len(recs) {
				vals := []float64{sumOnline / float64(n), sumCold / float64(n), sumHist / float64(n), sumBlend / float64(n)}
				if w != nil {
					fmt.Fprintf(w, "%d,%.2f,%.2f,%.2f,%.2f\n", n, vals[0], vals[1], vals[2], vals[3])
				}
				for k := range curves {
					curves[k].Seen = append(curves[k].Seen, n)
					curves[k].MAE = append(curves[k].MAE, vals[k])
				}
			}
		}
		o.Learn(r)
	}
	if w != nil {
		if err := w.Flush(); err != nil {
			return nil, nil, fmt.Errorf("curve: %w", err)
		}
	}
	if pngPath != "" {
		title := fmt.Sprintf("prequential running MAE, %d records", len(recs))
		if err := predictor.WriteCurvesPNG(pngPath, title, curves); err != nil {
			return nil, nil, err
		}
	}
	return pred, probs, nil
}

func absf(d int) float64 {
	if d < 0 {
		return float64(-d)
	}
	return float64(d)
}

// secondHalfLine is a named series of predictions writeSecondHalf scores.
type secondHalfLine struct {
	name string
	pred []int
}

// writeSecondHalf prints what the learner predicts once it has learnt from
// the first half of the stream: each line's predictions and the history
// baseline (started at med) over the records' second half, then their rank
// correlations with the actual lengths.
func writeSecondHalf(w io.Writer, lines []secondHalfLine, recs []predictor.TraceRecord, med int) error {
	half := len(recs) / 2
	if half == 0 || len(recs)-half < 2 {
		return nil
	}
	hist, err := predictor.PredictAll(predictor.HistoryPredictor{Default: med}, recs)
	if err != nil {
		return err
	}
	lines = append(lines, secondHalfLine{"  history", hist})
	// The first half's order too: a change that helps the second half
	// may cost the stream's start, where policies rank by it as well.
	fmt.Fprintf(w, "rank correlation (Spearman), first half (records 1-%d, while learning):", half)
	for _, l := range lines {
		fmt.Fprintf(w, " %s %.3f;", strings.TrimSpace(l.name), predictor.RankCorrelation(l.pred[:half], recs[:half]))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "second half (records %d-%d, after learning from the first):\n", half+1, len(recs))
	for _, l := range lines {
		rep, err := predictor.Evaluate(l.pred[half:], recs[half:])
		if err != nil {
			return err
		}
		rep.WriteSummary(w, l.name)
	}
	fmt.Fprintf(w, "  rank correlation (Spearman), second half:")
	for _, l := range lines {
		fmt.Fprintf(w, " %s %.3f;", strings.TrimSpace(l.name), predictor.RankCorrelation(l.pred[half:], recs[half:]))
	}
	fmt.Fprintln(w)
	return nil
}

// writeExpertErrors prints the mean absolute error of each expert of a
// mixture replayed over the records (the model alone, its program blend,
// the history baseline), for programs' first segments and later ones, and
// each relative to the experts' mean: on a leave-one-source-out stream,
// what the mixture's cross-source prior is measured from.
func writeExpertErrors(w io.Writer, x *predictor.ExpertMix) {
	first, later := x.ExpertErrors()
	for _, c := range []struct {
		name string
		mae  [3]float64
	}{{"first segments", first}, {"later segments", later}} {
		fmt.Fprintf(w, "experts, %s:", c.name)
		mean := (c.mae[0] + c.mae[1] + c.mae[2]) / 3
		for e, name := range predictor.ExpertNames {
			fmt.Fprintf(w, " %s MAE %.1f (%.3f of the mean);", name, c.mae[e], c.mae[e]/mean)
		}
		fmt.Fprintln(w)
	}
}
