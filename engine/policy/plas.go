package policy

// NewPLAS is Autellix's Program-Level Attained Service: a call enters the
// queue of its program's total service so far (the sum of its completed
// calls' execution time), so short programs overtake long ones (Autellix
// §4.2.1, equation 1).
func NewPLAS(o Options) *Autellix { return &Autellix{a: newAttained(programSum, o.Defaults())} }
