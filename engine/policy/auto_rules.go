package policy

import "strings"

// autoOff names the hand-set rules of the "auto" program order
// (Pitstop.order) switched off one at a time, for the ablation of
// docs/results-policies.md (session 13): ProgramOrder "auto-shape" drops the
// shape rule (the queues where DAG and chain programs are mixed),
// "auto-warmup" the warm-up order (the call's own order, not arrival order
// or the queues, until the program model is ready); both may follow "auto"
// ("auto-shape-warmup"). The CV thresholds are switched off by their own
// values (ProgramCVLow below 0, ProgramCVHigh above any CV). The tail guard
// (PitstopSlowdown) was the fourth rule, removed in session 13.
type autoOff struct {
	shape, warmup bool
}

// parseAutoOrder reads "auto" with any of the suffixes of autoOff.
func parseAutoOrder(name string) (autoOff, bool) {
	rest, ok := strings.CutPrefix(name, "auto")
	if !ok {
		return autoOff{}, false
	}
	var off autoOff
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "-shape") && !off.shape:
			off.shape, rest = true, rest[len("-shape"):]
		case strings.HasPrefix(rest, "-warmup") && !off.warmup:
			off.warmup, rest = true, rest[len("-warmup"):]
		default:
			return autoOff{}, false
		}
	}
	return off, true
}

// isAuto reports whether ProgramOrder leaves the order to Pitstop.order's
// rules ("", "auto" or "auto" with rules off).
func isAuto(name string) bool {
	_, ok := parseAutoOrder(name)
	return name == "" || ok
}

// autoOffOf is the rules ProgramOrder switches off ("auto-…").
func autoOffOf(name string) autoOff {
	off, _ := parseAutoOrder(name)
	return off
}
