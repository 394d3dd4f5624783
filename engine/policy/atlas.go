package policy

// NewATLAS is Autellix's Adaptive Thread-Level Attained Service: a call
// enters the queue of its program's longest observed critical path, and on
// completion raises that path to what it inherited plus its own service
// (Autellix §4.2.1, equation 2 and Algorithm 1 line 4). For single-threaded
// programs it equals PLAS; for DAG programs parallel threads share one
// priority, so a program's threads progress together.
func NewATLAS(o Options) *Autellix { return &Autellix{a: newAttained(criticalPath, o.Defaults())} }
