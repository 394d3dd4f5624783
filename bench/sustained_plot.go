package bench

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pitstop-llm/pitstop/bench/report"
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

// ReadSustainedJSON reads a report WriteSustainedJSON wrote.
func ReadSustainedJSON(path string) (*SustainedReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sustained report: %w", err)
	}
	var rep SustainedReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("sustained report %s: %w", path, err)
	}
	if len(rep.Policies) == 0 {
		return nil, fmt.Errorf("sustained report %s: no policies (not a --sustained JSON report?)", path)
	}
	return &rep, nil
}

// SustainedTrialsReport turns the searches' trials into a rate-sweep report
// (one run per series and rate) that report.Plot draws as latency against
// rate per series, e.g. per balancer. The searches of different seeds try
// mostly the same rates (each starts at one rate and halves or bisects), so
// a rate's latencies are the means over the seeds that tried it; a trial that
// was stopped (a rate far past capacity: its latencies are lower bounds)
// marks the rate stopped, and the plot leaves it out.
func SustainedTrialsReport(rep *SustainedReport) *report.Report {
	out := &report.Report{Workload: rep.Workload, Executor: rep.Executor, Profile: rep.Profile}
	for _, pol := range rep.Policies {
		type sum struct {
			n                             int
			e2e, p95, p99, ttft, ptl, slo float64
			sloTTFT, sloTPOT              float64
			stopped                       bool
			policy, balancer              string
		}
		byRate := map[float64]*sum{}
		var rates []float64
		for _, sd := range pol.Seeds {
			for _, t := range sd.Trials {
				s := byRate[t.Rate]
				if s == nil {
					s = &sum{policy: t.Run.Policy, balancer: t.Run.Balancer, sloTTFT: t.Run.SLOTTFTS, sloTPOT: t.Run.SLOTPOTS}
					byRate[t.Rate] = s
					rates = append(rates, t.Rate)
				}
				s.n++
				s.e2e += t.Run.E2EMeanS
				s.p95 += t.Run.E2EP95S
				s.p99 += t.Run.E2EP99S
				s.ttft += t.Run.TTFTMeanS
				s.ptl += t.Run.ProgramTokenLatencyS
				s.slo += t.Run.SLOAttainment
				s.stopped = s.stopped || t.Run.Stopped()
			}
		}
		slices.Sort(rates)
		for _, r := range rates {
			s := byRate[r]
			n := float64(s.n)
			run := report.Run{Policy: s.policy, Balancer: s.balancer, Rate: r, Replicas: rep.Replicas,
				E2EMeanS: s.e2e / n, E2EP95S: s.p95 / n, E2EP99S: s.p99 / n, TTFTMeanS: s.ttft / n, ProgramTokenLatencyS: s.ptl / n,
				SLOAttainment: s.slo / n, SLOTTFTS: s.sloTTFT, SLOTPOTS: s.sloTPOT}
			if run.Policy == "" { // a report from before runs carried their series
				run.Policy, run.Balancer, _ = strings.Cut(pol.Policy, "/")
			}
			if s.stopped {
				run.StoppedAtS = rep.WindowS
			}
			out.Runs = append(out.Runs, run)
		}
	}
	return out
}
