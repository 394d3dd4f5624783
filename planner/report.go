package planner

import (
	"fmt"
	"strings"
)

// ScheduleReport is a schedule as `pitstop plan --json` writes it.
type ScheduleReport struct {
	Method  string  `json:"method"`
	GPUs    int     `json:"gpus"`
	TotalS  float64 `json:"total_s"`  // estimated inference time
	SearchS float64 `json:"search_s"` // time to find the schedule
	// SearchCPUS is the CPU time the search used, when the caller measured
	// it (the CLI does: user and system time of the process).
	SearchCPUS float64       `json:"search_cpu_s,omitempty"`
	EndToEndS  float64       `json:"end_to_end_s"`
	Stages     []StageReport `json:"stages"`
}

// StageReport is one stage: its models with their plans.
type StageReport struct {
	StartS   float64      `json:"start_s"`
	EndS     float64      `json:"end_s"`
	GPUs     int          `json:"gpus"`
	Models   []PairReport `json:"models"`
	Finished []string     `json:"finished"`
}

// PairReport is a model's plan in a stage; Load when the stage (re)loads it.
type PairReport struct {
	Model string `json:"model"`
	DP    int    `json:"dp"`
	TP    int    `json:"tp"`
	Load  bool   `json:"load"`
}

// Report describes sc with the models' names.
func (a *App) Report(sc *Schedule) ScheduleReport {
	r := ScheduleReport{Method: sc.Method, GPUs: sc.GPUs, TotalS: sc.Total.Seconds(), SearchS: sc.Search.Seconds(),
		EndToEndS: (sc.Total + sc.Search).Seconds()}
	for _, st := range sc.Stages {
		sr := StageReport{StartS: st.Start.Seconds(), EndS: st.End.Seconds(), GPUs: st.GPUs}
		for i, p := range st.Pairs {
			sr.Models = append(sr.Models, PairReport{Model: a.Models[p.Model].Name, DP: p.Plan.DP, TP: p.Plan.TP, Load: st.Loads[i]})
		}
		for _, m := range st.Finished {
			sr.Finished = append(sr.Finished, a.Models[m].Name)
		}
		r.Stages = append(r.Stages, sr)
	}
	return r
}

// String is the stage table: one line per stage.
func (r ScheduleReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: estimated %.1f s + %.2f s search (%.2f s CPU) = %.1f s end to end, %d stages on %d GPUs\n",
		r.Method, r.TotalS, r.SearchS, r.SearchCPUS, r.EndToEndS, len(r.Stages), r.GPUs)
	fmt.Fprintf(&b, "  %-5s %9s %9s %4s  %s\n", "stage", "start s", "end s", "GPUs", "models (plan; * = loads)")
	for i, st := range r.Stages {
		var ms []string
		for _, m := range st.Models {
			star := ""
			if m.Load {
				star = "*"
			}
			ms = append(ms, fmt.Sprintf("%s dp%d×tp%d%s", m.Model, m.DP, m.TP, star))
		}
		fmt.Fprintf(&b, "  %-5d %9.1f %9.1f %4d  %s; %s finishes\n", i+1, st.StartS, st.EndS, st.GPUs, strings.Join(ms, ", "), strings.Join(st.Finished, ", "))
	}
	return b.String()
}
