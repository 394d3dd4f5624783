package report

import (
	"math"
	"reflect"
	"strings"
)

// Run is the summary of one (policy, rate) run. The JSON names of the first
// block of fields are the contract of DESIGN.md §8: add fields, never rename.
// All latencies are seconds on the engine's clock.
type Run struct {
	// DESIGN.md §8 contract.
	Policy               string  `json:"policy"`
	Rate                 float64 `json:"rate"`
	Requests             int     `json:"requests"`  // calls that arrived
	Completed            int     `json:"completed"` // calls that finished
	E2EMeanS             float64 `json:"e2e_mean_s"`
	E2EP50S              float64 `json:"e2e_p50_s"`
	E2EP99S              float64 `json:"e2e_p99_s"`
	TTFTMeanS            float64 `json:"ttft_mean_s"`
	TTFTP99S             float64 `json:"ttft_p99_s"`
	ThroughputRPS        float64 `json:"throughput_rps"` // completed calls per second
	ProgramTokenLatencyS float64 `json:"program_token_latency_s"`
	SwapOutBytes         int64   `json:"swap_out_bytes"`
	SwapInBytes          int64   `json:"swap_in_bytes"`
	RecomputeTokens      int64   `json:"recompute_tokens"`
	KVUtilMean           float64 `json:"kv_util_mean"` // time-weighted, 0..1
	LeakedBlocks         int     `json:"leaked_blocks"`

	// Extras.
	TTFTP50S                float64 `json:"ttft_p50_s"`
	E2EP95S                 float64 `json:"e2e_p95_s"`
	TTFTP95S                float64 `json:"ttft_p95_s"`
	TPOTMeanS               float64 `json:"tpot_mean_s"`
	TPOTP99S                float64 `json:"tpot_p99_s"`
	Programs                int     `json:"programs"`
	ProgramsCompleted       int     `json:"programs_completed"`
	ProgramTokenLatencyP99S float64 `json:"program_token_latency_p99_s"`
	Preemptions             int     `json:"preemptions"`
	// RecomputeBy splits RecomputeTokens by why the KV was dropped: "tool"
	// (discarded at or while paused on a tool call), "preempted" (evicted
	// while running), "host" (its host copy gave way to another call's).
	RecomputeBy map[string]int64 `json:"recompute_by,omitempty"`
	// PrefillTokens is every token computed as prefill (recompute included),
	// PromptTokens the input the calls took in: the prompts of those that
	// produced a first token, and per resume the tool's return plus the
	// token sampled before the pause;
	// 1 - (PrefillTokens - RecomputeTokens) / PromptTokens is the share the
	// prefix cache saved (prefill.go).
	PrefillTokens int64          `json:"prefill_tokens,omitempty"`
	PromptTokens  int64          `json:"prompt_tokens,omitempty"`
	Handling      map[string]int `json:"handling,omitempty"` // tool-call handling kind → count
	// DecisionCost is, per handling kind chosen at a tool call, the waste
	// that InferCept's model expected with the predicted tool time, the
	// waste it realised with the true tool time, and the least waste any
	// kind would have realised (the choice in hindsight); see DecisionCost.
	DecisionCost    map[string]DecisionCost `json:"decision_cost,omitempty"`
	HostTier        *HostTier               `json:"host_tier,omitempty"` // host_tier.go
	Predictor       *PredictorStats         `json:"predictor,omitempty"` // predictor.go
	KVUtilMax       float64                 `json:"kv_util_max"`
	TokensGenerated int64                   `json:"tokens_generated"`
	Iterations      int                     `json:"iterations"`
	OrphanEvents    int                     `json:"orphan_events"` // events naming a call that had not arrived (driver bugs)
	VirtualS        float64                 `json:"virtual_s"`     // last engine time seen
	WallS           float64                 `json:"wall_s"`        // wall-clock seconds the run took
	Seed            int64                   `json:"seed"`          // set by the driver
	DurationS       float64                 `json:"duration_s"`    // arrival window, set by the driver
	// SLO attainment (SOLA): the SLOs in seconds (0: not measured) and the
	// fraction of requests (calls that arrived) meeting both, TTFT alone and
	// TPOT alone (see the package doc for the rules).
	SLOTTFTS          float64 `json:"slo_ttft_s"`
	SLOTPOTS          float64 `json:"slo_tpot_s"`
	SLOAttainment     float64 `json:"slo_attainment"`
	SLOTTFTAttainment float64 `json:"slo_ttft_attainment"`
	SLOTPOTAttainment float64 `json:"slo_tpot_attainment"`
	// StoppedAtS is the engine time at which the run was stopped before
	// every program finished (bench --stop-after: a collapsed run), 0 when
	// it ran to the end. A stopped run did not sustain its rate; its e2e
	// and TTFT include the unfinished calls censored at the stop, so they
	// are lower bounds (see the package doc).
	StoppedAtS float64 `json:"stopped_at_s"`
	// Cluster runs (bench --replicas): the number of replicas, the
	// balancer, the prefix-hit rate (prompt tokens cached on the chosen
	// replica when the call was placed / prompt tokens) and each replica's
	// busy fraction (iteration time / run time). Absent on one engine.
	Replicas      int       `json:"replicas,omitempty"`
	Balancer      string    `json:"balancer,omitempty"`
	PrefixHitRate float64   `json:"prefix_hit_rate,omitempty"`
	ReplicaUtil   []float64 `json:"replica_util,omitempty"`
	// ByPosition splits the calls' TTFT and e2e by the call's position in
	// its program (PosFirst, PosBurst, PosLater; position.go), where the
	// driver names them.
	ByPosition map[string]PositionStats `json:"by_position,omitempty"`
	// ByClass splits them by the class of the call's program (the tenant
	// of a multi-tenant run, class.go), where the driver names them.
	ByClass map[string]PositionStats `json:"by_class,omitempty"`
}

// DecisionCost sums the handling decisions of one kind taken at tool calls,
// priced by handling.Waste in GB·s (KV bytes held idle or wasted × seconds)
// at the moment of the decision: Expected with the tool time the policy was
// told (the prediction), Realized with the tool's true duration, Hindsight
// with the true duration under the kind that would have wasted least.
// Realized − Hindsight is the decision's regret; Realized − Expected is what
// the prediction's error cost. The model's own terms: a discard priced as a
// full recompute whatever the prefix cache keeps, and re-decisions while
// the call waits (EvHandled) not counted.
type DecisionCost struct {
	Count        int     `json:"count"`
	ExpectedGBs  float64 `json:"expected_gb_s"`
	RealizedGBs  float64 `json:"realized_gb_s"`
	HindsightGBs float64 `json:"hindsight_gb_s"`
}

// Series names the run's line in tables and plots: the policy, and on
// several replicas the balancer too (policy/balancer).
func (r Run) Series() string {
	if r.Balancer == "" {
		return r.Policy
	}
	return r.Policy + "/" + r.Balancer
}

// Stopped reports whether the run was stopped before every program finished.
func (r Run) Stopped() bool { return r.StoppedAtS > 0 }

// Report is the result of one `pitstop bench` invocation: one Run per
// (policy, rate).
type Report struct {
	Workload string `json:"workload"`
	Executor string `json:"executor"`
	Profile  string `json:"profile"`
	// EngineFeatures is bench --engine-features: "same" (every policy with
	// pitstop's prefix cache, chunked prefill and swap path) or "paper"
	// (each policy's own traits).
	EngineFeatures string `json:"engine_features,omitempty"`
	// CacheEviction is bench --cache-eviction when not the default (lru):
	// the prefix cache's eviction order, every policy's.
	CacheEviction string `json:"cache_eviction,omitempty"`
	Runs          []Run  `json:"runs"`
}

// ContractRunFields are the JSON names of a Run that DESIGN.md §8 promises.
var ContractRunFields = []string{
	"policy", "rate", "requests", "completed",
	"e2e_mean_s", "e2e_p50_s", "e2e_p99_s", "ttft_mean_s", "ttft_p99_s", "throughput_rps",
	"program_token_latency_s", "swap_out_bytes", "swap_in_bytes", "recompute_tokens",
	"kv_util_mean", "leaked_blocks",
}

// ContractReportFields are the top-level JSON names that DESIGN.md §8 promises.
var ContractReportFields = []string{"workload", "executor", "profile", "runs"}

// sanitized returns a copy of r whose float fields are all finite (NaN and
// ±Inf become 0), so that encoding/json accepts it.
func (r Run) sanitized() Run {
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Float64 {
			if x := f.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
				f.SetFloat(0)
			}
		}
	}
	return r
}

// sanitized returns a copy of rep with sanitized runs and a non-nil Runs.
func (rep *Report) sanitized() *Report {
	out := *rep
	out.Runs = make([]Run, len(rep.Runs))
	for i, r := range rep.Runs {
		out.Runs[i] = r.sanitized()
	}
	return &out
}

// runFields lists the JSON names of Run's fields in declaration order, with
// their field index.
func runFields() (names []string, index []int) {
	t := reflect.TypeFor[Run]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		names = append(names, name)
		index = append(index, i)
	}
	return names, index
}
