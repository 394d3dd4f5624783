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
	// Hook, when set, masks the logits before the draw and sees the token
	// drawn (the runtime's grammar masks and logprobs).
	Hook SamplingHook
}

// SamplingHook lets the caller shape and observe a call's draws: Mask gets
// the logits of the call's next token before temperature and top-p and may
// set some to -Inf (constrained decoding); Sampled gets the token drawn
// and the logits it was drawn from (log probabilities). Executors that
// sample call it on their loop's goroutine; executors whose tokens are
// forced do not.
type SamplingHook interface {
	Mask(logits []float32)
	Sampled(token int32, logits []float32)
}
