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

// dags reports whether most of the class's programs are DAGs: over every
// program seen (the default), or with shown over those that made a second
// call.
func (t tableShape) dags(shown bool) bool {
	if shown {
		return 2*t.threaded >= t.shown
	}
	return 2*t.threaded >= t.programs
}
