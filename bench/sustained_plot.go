package bench

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteSustainedJSON writes rep as indented JSON at path.
func WriteSustainedJSON(path string, rep *SustainedReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("sustained report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("sustained report: %w", err)
	}
	return nil
}

// PlotSustained draws the sustained rate per policy as bars (the mean over
// seeds) with each seed's rate as a point, into dir as
// <workload>-sustained_rate.png, and returns the path.
func PlotSustained(dir string, rep *SustainedReport) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("sustained plot: %w", err)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s on %s: highest sustained rate (%g s window, %g s drain)", rep.Workload, rep.Profile, rep.WindowS, rep.DrainS)
	p.Y.Label.Text = "programs / s"
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	means := make(plotter.Values, len(rep.Policies))
	var seeds plotter.XYs
	names := make([]string, len(rep.Policies))
	for i, pol := range rep.Policies {
		means[i] = pol.SustainedRate
		names[i] = pol.Policy
		for _, sd := range pol.Seeds {
			seeds = append(seeds, plotter.XY{X: float64(i), Y: sd.SustainedRate})
		}
	}
	bars, err := plotter.NewBarChart(means, vg.Points(30))
	if err != nil {
		return "", fmt.Errorf("sustained plot: %w", err)
	}
	bars.LineStyle.Width = vg.Length(0)
	bars.Color = color.Gray{Y: 170}
	p.Add(bars)
	if len(seeds) > 0 {
		sc, err := plotter.NewScatter(seeds)
		if err != nil {
			return "", fmt.Errorf("sustained plot: %w", err)
		}
		sc.GlyphStyle.Shape = draw.CrossGlyph{}
		p.Add(sc)
		p.Legend.Add("per seed", sc)
	}
	p.Legend.Add("mean over seeds", bars)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Legend.Top, p.Legend.Left = true, true
	stem := strings.NewReplacer("/", "_", " ", "_").Replace(rep.Workload)
	path := filepath.Join(dir, stem+"-sustained_rate.png")
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return "", fmt.Errorf("sustained plot: %w", err)
	}
	return path, nil
}
