// Package sim is the simulated executor: it prices each iteration with a
// linear cost model of a GPU (a profile) instead of running a model, so the
// engine can replay hours of GPU traffic in seconds of wall time.
package sim

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

//go:embed profiles/*.json
var profileFS embed.FS

// IterCost prices one iteration (SOLA §5.2 form):
// base + prefill_token·Σprefill + prefill_attn·Σ(prefill tokens × attended context)
// + decode_seq·decodes + decode_ctx·Σ(context of decodes).
type IterCost struct {
	Base         float64 `json:"base_s"`
	PrefillToken float64 `json:"prefill_token_s"`
	PrefillAttn  float64 `json:"prefill_attn_s"`
	DecodeSeq    float64 `json:"decode_seq_s"`
	DecodeCtx    float64 `json:"decode_ctx_s"`
}

// SwapCost prices host transfers.
type SwapCost struct {
	PerTransfer    float64 `json:"per_transfer_s"`
	Bandwidth      float64 `json:"bandwidth_bytes_per_s"`
	CopiesPerBlock int     `json:"copies_per_block"` // per-block mode: copies per block (layers × K/V)
	Gathered       bool    `json:"gathered"`
	Overlap        float64 `json:"overlap"`         // fraction of swap time hidden behind compute, 0..1
	BlocksPerIter  int     `json:"blocks_per_iter"` // swap budget per iteration; 0 = none
}

// Profile is a simulated device running a model: sizes, iteration cost and
// swap cost, with where each number comes from.
type Profile struct {
	Name             string   `json:"name"`
	Model            string   `json:"model"`
	Device           string   `json:"device"`
	KVBytesPerToken  int      `json:"kv_bytes_per_token"`
	BlockSize        int      `json:"block_size"`
	KVCapacityTokens int      `json:"kv_capacity_tokens"`
	HostCapacity     int64    `json:"host_capacity_bytes"`
	MaxBatchedTokens int      `json:"max_batched_tokens"`
	MaxSeqs          int      `json:"max_seqs"`
	Iter             IterCost `json:"iter"`
	Swap             SwapCost `json:"swap"`
	Provenance       []string `json:"provenance"`
}

// BlockBytes is the size of one KV block across all layers.
func (p *Profile) BlockBytes() int { return p.KVBytesPerToken * p.BlockSize }

// NumBlocks is the device KV capacity in blocks.
func (p *Profile) NumBlocks() int { return p.KVCapacityTokens / p.BlockSize }

// HostBlocks is the host tier capacity in blocks.
func (p *Profile) HostBlocks() int { return int(p.HostCapacity / int64(p.BlockBytes())) }

// HandlingCost is the profile's cost model of computing and moving KV: the
// one the engine hands to policies (Config.Cost) and the simulator prices
// its swaps with.
func (p *Profile) HandlingCost() handling.CostModel {
	return handling.CostModel{
		IterBase:           p.Iter.Base,
		PerToken:           p.Iter.PrefillToken,
		TokenBudget:        p.MaxBatchedTokens,
		KVBytesPerToken:    float64(p.KVBytesPerToken),
		BlockTokens:        p.BlockSize,
		SwapPerTransfer:    p.Swap.PerTransfer,
		SwapCopiesPerBlock: p.Swap.CopiesPerBlock,
		SwapGathered:       p.Swap.Gathered,
		SwapBandwidth:      p.Swap.Bandwidth,
	}
}

// EngineConfig sizes an engine as the profile's device: its KV capacity,
// host tier, batch limits, swap budget and cost model (what `pitstop bench
// --executor sim` runs on).
func (p *Profile) EngineConfig() engine.Config {
	return engine.Config{
		NumBlocks:         p.NumBlocks(),
		BlockSize:         p.BlockSize,
		HostBlocks:        p.HostBlocks(),
		MaxBatchedTokens:  p.MaxBatchedTokens,
		MaxSeqs:           p.MaxSeqs,
		SwapBlocksPerIter: p.Swap.BlocksPerIter,
		Cost:              p.HandlingCost(),
		HostBlockBytes:    p.BlockBytes(),
	}
}

// Validate reports the first nonsensical field.
func (p *Profile) Validate() error {
	switch {
	case p.Name == "":
		return fmt.Errorf("profile has no name")
	case p.KVBytesPerToken <= 0, p.BlockSize <= 0, p.KVCapacityTokens < p.BlockSize:
		return fmt.Errorf("profile %s: kv_bytes_per_token, block_size and kv_capacity_tokens (>= one block) must be positive", p.Name)
	case p.MaxBatchedTokens <= 0 || p.MaxSeqs <= 0:
		return fmt.Errorf("profile %s: max_batched_tokens and max_seqs must be positive", p.Name)
	case p.Iter.Base < 0 || p.Iter.PrefillToken < 0 || p.Iter.PrefillAttn < 0 || p.Iter.DecodeSeq < 0 || p.Iter.DecodeCtx < 0:
		return fmt.Errorf("profile %s: iteration costs must not be negative", p.Name)
	case p.Iter.Base+p.Iter.PrefillToken+p.Iter.DecodeSeq <= 0:
		return fmt.Errorf("profile %s: an iteration must cost some time", p.Name)
	case p.Swap.Overlap < 0 || p.Swap.Overlap > 1:
		return fmt.Errorf("profile %s: swap overlap must be within 0..1, got %g", p.Name, p.Swap.Overlap)
	case p.HostCapacity < 0 || p.Swap.PerTransfer < 0 || p.Swap.Bandwidth < 0:
		return fmt.Errorf("profile %s: swap costs and host capacity must not be negative", p.Name)
	}
	return nil
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string {
	entries, _ := fs.ReadDir(profileFS, "profiles")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.Sort(names)
	return names
}

// LoadProfile returns a built-in profile by name, or reads a JSON file when
// name ends in .json.
func LoadProfile(name string) (*Profile, error) {
	var data []byte
	var err error
	if strings.HasSuffix(name, ".json") {
		data, err = os.ReadFile(name)
	} else {
		data, err = profileFS.ReadFile(path.Join("profiles", name+".json"))
		if err != nil {
			return nil, fmt.Errorf("unknown profile %q (valid: %s, or a path to a .json profile)", name, strings.Join(ProfileNames(), ", "))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return ParseProfile(data)
}

// ParseProfile decodes and validates a profile; unknown fields are errors.
func ParseProfile(data []byte) (*Profile, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}
