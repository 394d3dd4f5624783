package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable writes r as an aligned text table, one row per run. Latencies
// are in seconds, TPOT in milliseconds, swap in GB (10^9 bytes, out/in),
// KV utilisation in percent. When the runs measured SLO attainment, a line
// states the SLOs and the slo_att column gives the percentage of requests
// meeting both SLOs, then TTFT's alone and TPOT's alone ("-" for a run
// without SLOs). Write errors are ignored (it is meant for a
// terminal or a log); check w yourself if that matters.
func WriteTable(w io.Writer, r *Report) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "workload=%s executor=%s profile=%s\n", r.Workload, r.Executor, r.Profile)
	slo := sloSet(r)
	if len(slo) > 0 {
		fmt.Fprintf(w, "SLO attainment: requests with TTFT <= T_TTFT and TPOT <= T_TPOT (%s); slo_att = both/ttft/tpot in %%\n", strings.Join(slo, "; "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\trate\tdone/req\te2e_mean\te2e_p50\te2e_p95\te2e_p99\tttft_mean\tttft_p99\ttpot_ms\tprog_tok_lat\tthr_rps\tkv_util\tswap_GB(out/in)\trecompute\tleaked\t"
	if len(slo) > 0 {
		head += "slo_att\t"
	}
	replicas := slices.ContainsFunc(r.Runs, func(run Run) bool { return run.Replicas > 0 })
	if replicas {
		head += "replicas\tprefix_hit\treplica_util\t"
	}
	fmt.Fprintln(tw, head)
	var stopped []string
	for _, run := range r.Runs {
		run = run.sanitized()
		mark := ""
		if run.Stopped() {
			mark = "*"
			stopped = append(stopped, fmt.Sprintf("%s@%s at %s s", run.Series(), num(run.Rate), sec(run.StoppedAtS)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.2f/%.2f\t%d\t%d\t",
			run.Series(), num(run.Rate), run.Completed, run.Requests, mark,
			sec(run.E2EMeanS), sec(run.E2EP50S), sec(run.E2EP95S), sec(run.E2EP99S),
			sec(run.TTFTMeanS), sec(run.TTFTP99S),
			sec(run.TPOTMeanS*1000), sec(run.ProgramTokenLatencyS),
			sec(run.ThroughputRPS), run.KVUtilMean*100,
			float64(run.SwapOutBytes)/1e9, float64(run.SwapInBytes)/1e9,
			run.RecomputeTokens, run.LeakedBlocks)
		if len(slo) > 0 {
			if run.SLOTTFTS > 0 {
				fmt.Fprintf(tw, "%.1f/%.1f/%.1f\t", 100*run.SLOAttainment, 100*run.SLOTTFTAttainment, 100*run.SLOTPOTAttainment)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		if replicas {
			util := make([]string, len(run.ReplicaUtil))
			for i, u := range run.ReplicaUtil {
				util[i] = strconv.Itoa(int(100*u + 0.5))
			}
			fmt.Fprintf(tw, "%d\t%.1f%%\t%s\t", run.Replicas, 100*run.PrefixHitRate, strings.Join(util, "/"))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(stopped) > 0 {
		fmt.Fprintf(w, "* stopped before every program finished (not sustained; latencies are lower bounds): %s\n", strings.Join(stopped, ", "))
	}
}

// sloSet lists the distinct SLO pairs of r's runs as "T_TTFT=x s, T_TPOT=y
// s", in order of first appearance; empty when no run measured attainment.
func sloSet(r *Report) []string {
	var out []string
	for _, run := range r.Runs {
		if !(run.SLOTTFTS > 0) {
			continue
		}
		s := fmt.Sprintf("T_TTFT=%s s, T_TPOT=%s s", num(run.SLOTTFTS), num(run.SLOTPOTS))
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
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
