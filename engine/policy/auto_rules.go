package policy

// isAuto reports whether ProgramOrder leaves the program-level order to
// Pitstop.order: "", "auto" or "gittins-started", its name since session
// 14 (gittins_started.go: arrival order of DAG programs while the learned
// Gittins index never lets a fresh program pass a started one, chains by
// the attained-service queues until ten programs completed, else the
// call's order), or "gittins-started-call", the same without the chains'
// warm-up (the ablation). Session 14 removed auto's CV threshold (arrival
// order for DAG programs of CV below 0.7) and the DAGs' warm-up order,
// with "auto-warmup", its switch; session 13 had removed the tail guard,
// the shape rule and the queues for a heavy tail.
func isAuto(name string) bool {
	return name == "" || name == "auto" || name == "gittins-started" || name == "gittins-started-call" ||
		name == "gittins-started-shown" || name == "gittins-started-held" || name == "gittins-started-all" ||
		censoredModeOf(name) != censoredOff
}
