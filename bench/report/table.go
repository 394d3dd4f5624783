package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteTable writes r as an aligned text table, one row per run. Latencies
// are in seconds, TPOT in milliseconds, swap in GB (10^9 bytes, out/in),
// KV utilisation in percent. Write errors are ignored (it is meant for a
// terminal or a log); check w yourself if that matters.
func WriteTable(w io.Writer, r *Report) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "workload=%s executor=%s profile=%s\n", r.Workload, r.Executor, r.Profile)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\trate\tdone/req\te2e_mean\te2e_p50\te2e_p99\tttft_mean\tttft_p99\ttpot_ms\tprog_tok_lat\tthr_rps\tkv_util\tswap_GB(out/in)\trecompute\tleaked\t")
	for _, run := range r.Runs {
		run = run.sanitized()
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.2f/%.2f\t%d\t%d\t\n",
			run.Policy, num(run.Rate), run.Completed, run.Requests,
			sec(run.E2EMeanS), sec(run.E2EP50S), sec(run.E2EP99S),
			sec(run.TTFTMeanS), sec(run.TTFTP99S),
			sec(run.TPOTMeanS*1000), sec(run.ProgramTokenLatencyS),
			sec(run.ThroughputRPS), run.KVUtilMean*100,
			float64(run.SwapOutBytes)/1e9, float64(run.SwapInBytes)/1e9,
			run.RecomputeTokens, run.LeakedBlocks)
	}
	tw.Flush()
}

// sec formats a latency-like value with 4 significant digits (whole
// numbers from 1000 up).
func sec(x float64) string {
	if x >= 1000 || x <= -1000 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// num formats a rate compactly.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
