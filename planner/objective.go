package planner

import "fmt"

// Objective is what the search's greedy step maximises per added GPU.
type Objective int

const (
	// ModelRates is the sum over the stage's models of each one's rate:
	// the FLOPs it has left over the time its plan needs to finish them
	// (load included). Optimus's marginal gain per resource, per model.
	ModelRates Objective = iota
	// StageWork is the paper's stage throughput read literally: FLOPs
	// finished within the stage over its duration (until its first model
	// finishes). It is myopic: a model still loading when a short one
	// ends the stage adds no work, so stages stay narrow.
	StageWork
)

// ParseObjective reads an objective's name.
func ParseObjective(name string) (Objective, error) {
	switch name {
	case "model-rates":
		return ModelRates, nil
	case "stage-work":
		return StageWork, nil
	}
	return 0, fmt.Errorf("unknown objective %q (valid: model-rates, stage-work)", name)
}

func (o Objective) String() string {
	if o == StageWork {
		return "stage-work"
	}
	return "model-rates"
}
