package predictor

import (
	"encoding/json"
	"fmt"
)

// stateHeader opens every JSON state file a deployment's length state
// keeps (ExpertMixStateFile, ModeLedStateFile): what wrote it and in which
// layout, so that a restore refuses another's file or another layout
// before reading the rest. Embedded, its fields stay at the top level of
// the JSON object.
type stateHeader struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
}

// check says why h is not of kind at version (nil when it is).
func (h stateHeader) check(kind string, version int) error {
	if h.Kind != kind || h.Version != version {
		return fmt.Errorf("not a version-%d %s file (kind %q, version %d)", version, kind, h.Kind, h.Version)
	}
	return nil
}

// saveJSONState writes v as JSON to dir/name atomically (saveStateFile);
// what names the state in errors.
func saveJSONState(dir, name, what string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("save %s: %w", what, err)
	}
	return saveStateFile(dir, name, what, data)
}
