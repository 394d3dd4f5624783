package policy

// The default program order applies arrival order of programs only where
// most programs are DAGs (gittins_started.go): at least half of the
// class's programs have had two calls in the engine at once. It counts
// every program seen, so a program whose only call so far is its first
// counts as a chain. Past capacity, with admission "started" (a fresh
// program's first call waits behind every started program's calls), most
// programs in the table are such fresh ones: at mcts @2 (6x its sustained
// rate) the share of DAGs fell to about a half and the order flipped
// between arrival order of programs and the call's order at every few
// programs. In the call's order the started tree searches share the
// engine call by call, every call waits about as long (TTFT 126 s mean, p99
// 187 s), and a node's context has left the prefix cache before its
// children are admitted: 38 % of the prompt tokens cached against 76 % in
// arrival order of programs, and 0.55x its calls per second
// (docs/results-policies.md, session 18, spike18).
//
// With ProgramOrder "gittins-started-shown" the test counts only the
// programs that have shown their shape: those that made a second call,
// after which they are a chain (one call at a time) or a DAG (two at
// once). A program that has made one call is evidence of neither. No
// constant: the same majority over the programs the table knows the shape
// of.

// With ProgramOrder "gittins-started-held" the test leaves out only the
// programs none of whose calls has generated a token: those the admission
// holds back (and, below capacity, those whose first prefill is under way).
// A program pitstop itself keeps from starting says nothing of the
// workload's shape, but a program that has run its first call and ended or
// not yet made its second counts, as in the default: with "-shown" the
// first forty programs of mixed @0.7 (chat, react and tree searches in one
// class) were ordered as DAGs, a handful of tree searches being the
// majority of the programs that had made a second call, and seed 3's mean
// moved past vllm-opt's by 0.1 %.

// shapeTest is which programs the DAG test counts (Pitstop.shapeTest).
type shapeTest uint8

const (
	shapeHeld  shapeTest = iota // all but those with no token yet (the default since session 18; "gittins-started-held")
	shapeAll                    // every program seen ("gittins-started-all", the default before)
	shapeShown                  // those that made a second call ("gittins-started-shown")
)

// dags reports whether most of the class's programs, as the test counts
// them, are DAGs.
func (t tableShape) dags(test shapeTest) bool {
	switch test {
	case shapeShown:
		return 2*t.threaded >= t.shown
	case shapeHeld:
		return 2*t.threaded >= t.programs-t.held
	}
	return 2*t.threaded >= t.programs
}

// shapeTestOf reads Options.ProgramOrder's shape test. The held test is
// the default since session 18 (docs/results-policies.md, "session 18,
// lead"): every Show 1 point and sustained step identical, mcts @2's calls
// per second 1.27-1.33x lamps's against 0.71x; "gittins-started-all" is the
// test over every program seen, as before (the ablation).
func shapeTestOf(order string) shapeTest {
	switch order {
	case "gittins-started-all":
		return shapeAll
	case "gittins-started-shown":
		return shapeShown
	}
	return shapeHeld
}
