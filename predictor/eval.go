package predictor

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// EvalReport holds the LAMPS §5 / Table 3 metrics of length predictions.
//
// Acc-k (LAMPS: "the percentage of predictions that differ from the actual
// length by no more than k words") is the fraction of records with
// |predicted − actual| ≤ k tokens; the paper counted words of ToolBench
// answers, pitstop counts tokens. LAMPS reports an MAE of 3.06 next to
// Acc-15 = 78.3%, which is only possible if its MAE is in bins (21.7% of
// errors above 15 words already give an MAE above 3.2 words), so both are
// given here: MAETokens and MAEBins (|predicted bin − actual bin|).
type EvalReport struct {
	N         int
	Acc5      float64
	Acc15     float64
	MAETokens float64
	MAEBins   float64
	BinAcc    float64 // exact bin
	PerBin    [NumClasses]BinReport
	// Confusion[t][p] counts records of actual bin t predicted as bin p.
	Confusion [NumClasses][NumClasses]int
}

// BinReport is the accuracy over the records whose actual length falls in one bin.
type BinReport struct {
	N      int
	Acc5   float64
	Acc15  float64
	BinAcc float64
}

// Evaluate scores predicted token counts against recs' actual lengths.
// overflowTokens is the value predictions use for the overflow bin.
func Evaluate(pred []int, recs []TraceRecord) (EvalReport, error) {
	var r EvalReport
	if len(pred) != len(recs) {
		return r, fmt.Errorf("evaluate: %d predictions for %d records", len(pred), len(recs))
	}
	if len(recs) == 0 {
		return r, errors.New("evaluate: no records")
	}
	var acc5, acc15, exact [NumClasses]int
	var absTok, absBin float64
	for i, rec := range recs {
		actual := rec.PreToolOutputTokens
		tb, pb := BinOf(actual), BinOf(pred[i])
		d := abs(pred[i] - actual)
		absTok += float64(d)
		absBin += float64(abs(pb - tb))
		r.PerBin[tb].N++
		r.Confusion[tb][pb]++
		if d <= 5 {
			acc5[tb]++
		}
		if d <= 15 {
			acc15[tb]++
		}
		if tb == pb {
			exact[tb]++
		}
	}
	n := float64(len(recs))
	var s5, s15, se int
	for b := range r.PerBin {
		s5 += acc5[b]
		s15 += acc15[b]
		se += exact[b]
		if k := r.PerBin[b].N; k > 0 {
			r.PerBin[b].Acc5 = float64(acc5[b]) / float64(k)
			r.PerBin[b].Acc15 = float64(acc15[b]) / float64(k)
			r.PerBin[b].BinAcc = float64(exact[b]) / float64(k)
		}
	}
	r.N = len(recs)
	r.Acc5, r.Acc15, r.BinAcc = float64(s5)/n, float64(s15)/n, float64(se)/n
	r.MAETokens, r.MAEBins = absTok/n, absBin/n
	return r, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// PredictAll runs p over recs' inputs; a *Model runs them in batches.
func PredictAll(p LengthPredictor, recs []TraceRecord) ([]int, error) {
	pred := make([]int, len(recs))
	if m, ok := p.(*Model); ok {
		ins := make([]Input, len(recs))
		for i := range recs {
			ins[i] = recs[i].Input
		}
		return pred, m.PredictBatch(ins, pred)
	}
	for i := range recs {
		pred[i], _ = p.PredictLength(recs[i].Input)
	}
	return pred, nil
}

// WriteSummary prints the headline metrics on one line.
func (r *EvalReport) WriteSummary(w io.Writer, name string) {
	fmt.Fprintf(w, "%-22s n=%-5d Acc-5 %5.1f%%  Acc-15 %5.1f%%  MAE %6.1f tokens  %5.2f bins  bin-acc %5.1f%%\n",
		name, r.N, 100*r.Acc5, 100*r.Acc15, r.MAETokens, r.MAEBins, 100*r.BinAcc)
}

// WritePerBin prints the per-bin accuracies (LAMPS Table 3's rows) for every
// bin with records.
func (r *EvalReport) WritePerBin(w io.Writer) {
	fmt.Fprintf(w, "%-8s %-9s %6s %7s %7s %8s\n", "bin", "tokens", "n", "Acc-5", "Acc-15", "bin-acc")
	for b, br := range r.PerBin {
		if br.N == 0 {
			continue
		}
		rng := fmt.Sprintf("%d-%d", b*BinWidth, b*BinWidth+BinWidth-1)
		if b == OverflowBin {
			rng = fmt.Sprintf("≥%d", NumBins*BinWidth)
		}
		fmt.Fprintf(w, "%-8d %-9s %6d %6.1f%% %6.1f%% %7.1f%%\n", b, rng, br.N, 100*br.Acc5, 100*br.Acc15, 100*br.BinAcc)
	}
}

// ConfusionImage draws the confusion matrix as a heat map: actual bin down,
// predicted bin across, each row normalised to its count, colour on a log
// scale from white (none) to dark blue (the whole row).
func (r *EvalReport) ConfusionImage() image.Image {
	const cell, left, top, right, bottom = 10, 56, 36, 16, 48
	size := NumClasses * cell
	img := image.NewRGBA(image.Rect(0, 0, left+size+right, top+size+bottom))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	for t := range NumClasses {
		rowN := r.PerBin[t].N
		for p := range NumClasses {
			c := r.Confusion[t][p]
			col := color.RGBA{255, 255, 255, 255}
			if c > 0 {
				// log scale: one record in a row of 1000 is faint, the whole row is darkest.
				f := math.Log1p(1000*float64(c)/float64(rowN)) / math.Log1p(1000)
				col = color.RGBA{uint8(235 - 227*f), uint8(242 - 194*f), uint8(255 - 148*f), 255}
			}
			x0, y0 := left+p*cell, top+t*cell
			draw.Draw(img, image.Rect(x0, y0, x0+cell-1, y0+cell-1), image.NewUniform(col), image.Point{}, draw.Src)
		}
	}
	// Diagonal guide.
	for i := range NumClasses {
		img.Set(left+i*cell+cell/2, top+i*cell+cell/2, color.RGBA{220, 40, 40, 255})
	}
	black := image.NewUniform(color.Black)
	d := &font.Drawer{Dst: img, Src: black, Face: basicfont.Face7x13}
	text := func(x, y int, s string) {
		d.Dot = fixed.P(x, y)
		d.DrawString(s)
	}
	text(left, 14, "confusion: actual bin (rows) x predicted bin (columns)")
	text(left, 28, fmt.Sprintf("n=%d  Acc-5 %.1f%%  Acc-15 %.1f%%  row-normalised, log colour", r.N, 100*r.Acc5, 100*r.Acc15))
	for b := 0; b <= NumBins; b += 10 {
		lbl := strconv.Itoa(b)
		if b == OverflowBin {
			lbl = "50+"
		}
		text(left+b*cell, top+size+14, lbl)
		text(left-30, top+b*cell+cell, lbl)
	}
	text(left+size/2-56, top+size+32, "predicted bin (x10 tokens)")
	text(4, top+size+44, "actual bin down")
	return img
}

// WriteConfusionPNG writes ConfusionImage to path.
func (r *EvalReport) WriteConfusionPNG(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("confusion plot: %w", err)
	}
	if err := png.Encode(f, r.ConfusionImage()); err != nil {
		f.Close()
		return fmt.Errorf("confusion plot %s: %w", path, err)
	}
	return f.Close()
}
