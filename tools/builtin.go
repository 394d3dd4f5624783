package tools

import (
	"fmt"
	"slices"
	"time"
)

// Names of the built-in tools.
const (
	CalculatorTool  = "calculator"
	CurrentTimeTool = "current_time"
	UnitConvertTool = "unit_convert"
	HTTPGetTool     = "http_get"
)

// BuiltinConfig chooses and configures the built-in tools.
type BuiltinConfig struct {
	// Disable lists built-in tools not to register.
	Disable []string
	// Now is current_time's clock (nil: time.Now).
	Now func() time.Time
	// HTTPGet enables http_get when non-nil. It is off by default: a model
	// that can fetch URLs can reach whatever the server can.
	HTTPGet *HTTPGetConfig
}

// RegisterBuiltins registers calculator, current_time and unit_convert
// (unless disabled), and http_get when cfg.HTTPGet is set.
func RegisterBuiltins(r *Registry, cfg BuiltinConfig) error {
	var list []*Tool
	add := func(t *Tool, err error) error {
		if err != nil {
			return err
		}
		if !slices.Contains(cfg.Disable, t.Name) {
			list = append(list, t)
		}
		return nil
	}
	if err := add(NewCalculatorTool()); err != nil {
		return err
	}
	if err := add(NewCurrentTimeTool(cfg.Now)); err != nil {
		return err
	}
	if err := add(NewUnitConvertTool()); err != nil {
		return err
	}
	if cfg.HTTPGet != nil {
		if err := add(NewHTTPGetTool(*cfg.HTTPGet)); err != nil {
			return err
		}
	}
	for _, t := range list {
		if err := r.Register(t); err != nil {
			return fmt.Errorf("registering built-in tools: %w", err)
		}
	}
	return nil
}
