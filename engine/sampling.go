package engine

// Sampling is how an executor that runs a model draws a call's next tokens;
// the call's Request carries it and every BatchItem repeats it, so an
// executor needs nothing beside the Batch. The simulator and scripted calls
// ignore it (their tokens are forced).
type Sampling struct {
	// Temperature divides the logits; 0 (or below) is greedy: the most
	// likely token, the lowest id on ties.
	Temperature float64
	// TopP keeps the smallest set of most likely tokens whose probability
	// reaches TopP (nucleus sampling); 0 or >= 1 keeps all.
	TopP float64
	// Seed of the call's draws. The draw for a position depends only on
	// (Seed, position), so a call that is swapped, or discarded and
	// recomputed, draws the same tokens as one that is not.
	Seed uint64
}
