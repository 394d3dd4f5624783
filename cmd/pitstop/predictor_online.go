package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"

	"github.com/pitstop-llm/pitstop/predictor"
)

// curveEvery is how many records pass between points of the --curve CSV.
const curveEvery = 50

// prequential replays recs in order through an online learner that starts
// from base (the model info describes): each record is predicted, then
// learnt from. It returns the predictions and, when curvePath is set, writes
// the running MAE of the learner, of base without learning and of the
// history baseline.
func prequential(base predictor.LengthPredictor, info *predictor.ModelInfo, recs []predictor.TraceRecord, curvePath string) ([]int, error) {
	if info.MLP == nil {
		return nil, errors.New("predictor eval --online: the model's graph is not the plain MLP the learner updates")
	}
	o, err := predictor.NewOnlineLength(base, info.MLP, info.OverflowTokens, predictor.OnlineOptions{})
	if err != nil {
		return nil, err
	}
	var w *bufio.Writer
	if curvePath != "" {
		f, err := os.Create(curvePath)
		if err != nil {
			return nil, fmt.Errorf("curve: %w", err)
		}
		defer f.Close()
		w = bufio.NewWriter(f)
		fmt.Fprintln(w, "segments,mae_online,mae_not_learning,mae_history")
	}
	hist := predictor.HistoryPredictor{Default: predictor.MedianTokens(recs)}
	pred := make([]int, len(recs))
	var sumOnline, sumCold, sumHist float64
	for i, r := range recs {
		pred[i], _ = o.PredictLength(r.Input)
		if w != nil {
			cold, _ := base.PredictLength(r.Input)
			h, _ := hist.PredictLength(r.Input)
			sumOnline += absf(pred[i] - r.PreToolOutputTokens)
			sumCold += absf(cold - r.PreToolOutputTokens)
			sumHist += absf(h - r.PreToolOutputTokens)
			if n := i + 1; n%curveEvery == 0 || n == len(recs) {
				fmt.Fprintf(w, "%d,%.2f,%.2f,%.2f\n", n, sumOnline/float64(n), sumCold/float64(n), sumHist/float64(n))
			}
		}
		o.Learn(r)
	}
	if w != nil {
		if err := w.Flush(); err != nil {
			return nil, fmt.Errorf("curve: %w", err)
		}
	}
	return pred, nil
}

func absf(d int) float64 {
	if d < 0 {
		return float64(-d)
	}
	return float64(d)
}
