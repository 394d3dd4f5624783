package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotMetric is one figure Plot draws.
type plotMetric struct {
	name  string // file-name part
	title string
	ylab  string
	value func(*Run) float64
	// percent draws y in 0..100 with the SLOs in the title; the figure is
	// drawn only when some run measured SLO attainment.
	percent bool
}

var plotMetrics = []plotMetric{
	{"e2e_mean", "mean end-to-end latency", "seconds", func(r *Run) float64 { return r.E2EMeanS }, false},
	{"e2e_p95", "p95 end-to-end latency", "seconds", func(r *Run) float64 { return r.E2EP95S }, false},
	{"e2e_p99", "p99 end-to-end latency", "seconds", func(r *Run) float64 { return r.E2EP99S }, false},
	{"ttft_mean", "mean time to first token", "seconds", func(r *Run) float64 { return r.TTFTMeanS }, false},
	{"program_token_latency", "program token latency (Autellix)", "seconds / token", func(r *Run) float64 { return r.ProgramTokenLatencyS }, false},
	{name: "slo_attainment", title: "SLO attainment", ylab: "requests meeting TTFT and TPOT SLOs (%)",
		value: func(r *Run) float64 { return 100 * r.SLOAttainment }, percent: true},
}

// Plot draws one PNG per metric (mean, p95 and p99 e2e latency, mean TTFT,
// program token latency, and SLO attainment when the runs measured it: the
// percentage of requests meeting both SLOs, the SLOs in the title) into
// dir, creating dir if needed. Each figure has
// x = rate and one line with points per policy, with a legend, and is named
// <workload>-<metric>.png. Each file is written atomically. It returns the
// paths written; on error, the files already written stay.
func Plot(dir string, r *Report) ([]string, error) {
	if r == nil {
		return nil, errors.New("report: Plot: nil report")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: plot: %w", err)
	}
	rep := r.sanitized()

	// Policies in order of first appearance; runs of each sorted by rate.
	var policies []string
	byPolicy := map[string][]*Run{}
	for i := range rep.Runs {
		run := &rep.Runs[i]
		if _, ok := byPolicy[run.Series()]; !ok {
			policies = append(policies, run.Series())
		}
		byPolicy[run.Series()] = append(byPolicy[run.Series()], run)
	}
	for _, runs := range byPolicy {
		slices.SortStableFunc(runs, func(a, b *Run) int {
			switch {
			case a.Rate < b.Rate:
				return -1
			case a.Rate > b.Rate:
				return 1
			}
			return 0
		})
	}

	slo := sloSet(rep)
	var paths []string
	for _, m := range plotMetrics {
		title := m.title
		if m.percent {
			if len(slo) == 0 {
				continue
			}
			title += " (" + strings.Join(slo, "; ") + ")"
		}
		p := plot.New()
		p.Title.Text = plotTitle(rep, title)
		p.X.Label.Text = "rate (arrivals/s)"
		p.Y.Label.Text = m.ylab
		p.Y.Min = 0
		p.Legend.Top = true
		p.Legend.Left = true
		if m.percent {
			p.Y.Max = 100
			p.Legend.Top = false // attainment falls with rate: the legend goes bottom left
		}
		p.Add(plotter.NewGrid())

		args := make([]any, 0, 2*len(policies))
		for _, pol := range policies {
			var xys plotter.XYs
			for _, run := range byPolicy[pol] {
				if run.Stopped() {
					continue // a lower bound, not a latency: the line ends where the policy stopped sustaining
				}
				xys = append(xys, plotter.XY{X: run.Rate, Y: m.value(run)})
			}
			if len(xys) == 0 {
				continue // stopped at every rate: nothing to draw
			}
			name := pol
			if name == "" {
				name = "(none)"
			}
			args = append(args, name, xys)
		}
		if err := plotutil.AddLinePoints(p, args...); err != nil {
			return paths, fmt.Errorf("report: plot %s: %w", m.name, err)
		}
		wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, "png")
		if err != nil {
			return paths, fmt.Errorf("report: plot %s: %w", m.name, err)
		}
		path := filepath.Join(dir, fileStem(rep.Workload)+"-"+m.name+".png")
		if err := writeAtomic(path, func(w io.Writer) error {
			_, err := wt.WriteTo(w)
			return err
		}); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func plotTitle(r *Report, metric string) string {
	parts := []string{}
	if r.Workload != "" {
		parts = append(parts, r.Workload)
	}
	if r.Profile != "" {
		parts = append(parts, r.Profile)
	}
	if r.Executor != "" {
		parts = append(parts, r.Executor)
	}
	if len(parts) == 0 {
		return metric
	}
	return strings.Join(parts, " / ") + ": " + metric
}

// fileStem makes s safe as a file-name part.
func fileStem(s string) string {
	if s == "" {
		return "report"
	}
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			return c
		}
		return '_'
	}, s)
}
