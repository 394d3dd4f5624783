package policy

// isAuto reports whether ProgramOrder leaves the program-level order to
// Pitstop.order's rules: "" or "auto", or "auto-warmup", which switches the
// warm-up order off (the call's own order, not arrival order or the queues,
// until the program model is ready) for the ablation of
// docs/results-policies.md (session 13). The CV threshold is switched off
// by its own value (ProgramCVLow below 0). Session 13 removed the three
// rules whose removal lost nothing there: the tail guard (PitstopSlowdown),
// the shape rule (the queues whenever DAG and chain programs were mixed)
// and the queues for a heavy tail (ProgramCVHigh).
func isAuto(name string) bool {
	return name == "" || name == "auto" || name == "auto-warmup"
}
