package policy

// isAuto reports whether ProgramOrder leaves the program-level order to
// Pitstop.order: "", "auto" or "gittins-started", its name since session
// 14 (gittins_started.go: arrival order of DAG programs while the learned
// Gittins index never lets a fresh program pass a started one, else the
// call's order). Session 14 removed auto's last two hand rules, the CV
// threshold (arrival order for DAG programs of CV below 0.7) and the
// warm-up orders (arrival order for DAGs, the attained-service queues for
// chains, until ten programs completed), with "auto-warmup", the latter's
// switch; session 13 had removed the tail guard, the shape rule and the
// queues for a heavy tail.
func isAuto(name string) bool {
	return name == "" || name == "auto" || name == "gittins-started"
}
