// Package handling holds the pure functions behind pitstop's choice of what to
// do with a call's KV cache while it waits for a tool (preserve, swap or
// discard) and behind the memory-over-time score that LAMPS-style policies
// rank waiting calls by.
//
// Everything here is a closed-form function of a CostModel (the engine's own
// iteration-time and swap-time model) and a few counts; nothing allocates, so
// the scheduler can score thousands of waiting calls per iteration.
//
// # Time model
//
// One iteration batches b tokens and lasts IterTime(b) = IterBase + PerToken·b.
// The other running calls add RunningTokens (r) tokens to every iteration
// (decodes: one each). A prefill or a recompute of L tokens is chunked in the
// spare budget c_h = max(TokenBudget − r, 1) (InferCept's c_h; TokenBudget ≤ 0
// means no budget: one chunk): ⌊L/c_h⌋ full chunks of IterTime(r + c_h) and a
// last partial chunk of IterTime(r + L mod c_h). A decode iteration of the call
// lasts IterTime(r + 1). A swap of C tokens moves ⌈C/BlockTokens⌉ whole blocks
// one way in SwapTime(C) = transfers·SwapPerTransfer + bytes/SwapBandwidth, with
// SwapCopiesPerBlock transfers per block, or one per swap when SwapGathered
// (Autellix §5). The simulator prices its swaps with the same CostModel.
//
// Memory held during an iteration is the call's computed KV after it: blocks
// are allocated for a chunk before it runs (the engine allocates per chunk,
// so a chunked prefill holds a staircase, not a rectangle).
//
// # Waste (InferCept, ICML'24, equations 1–3; LAMPS §2.3)
//
// For a call paused with C computed context tokens, C_other tokens of other
// running calls, r running tokens per iteration and T seconds of tool left,
// in byte·seconds (M = KVBytesPerToken; M ≤ 0 reports token·seconds):
//
//	Preserve: M · T · C
//	Discard:  M · ( Σ_chunks IterTime(r+len_j)·(tokens recomputed so far)  +  C_other · PerToken · C )
//	Swap:     M · 2 · SwapTime(C) · (C + C_other)
//
// The discard line is InferCept's T_fwd(C)·C + T_fwd(C)·C_other with the
// chunking its public code applies: its own part f_s·n(n+1)/2·c_h is the
// staircase above (each chunk holds what has been recomputed so far for one
// iteration), and its others' part f_ch·n·running is the time the recompute
// chunks add to the iterations the other calls run in (PerToken per
// recomputed token) times the memory those calls hold meanwhile. With chunked
// prefill the others keep decoding, so they lose PerToken·C, not the whole
// T_fwd(C) the paper's equation charges (that form assumes prefill and decode
// are not batched together). The swap line is equation (3): the transfer is
// carried out inside the iteration, so the call's own C tokens and every other
// running call's C_other tokens sit idle for a swap-out and a swap-in.
//
// # Memory over time (LAMPS §4.2–4.3, Figure 4)
//
// A Segment is one stretch of a call that ends with a tool call: prefill of
// Prompt tokens, PreDecode output tokens, a tool of ToolTime seconds that
// returns ToolReturn tokens, then PostDecode output tokens. The last prefill
// chunk samples the first output token (as the engine does), so the call
// reaches its tool after D−1 decode iterations with C = Prompt + PreDecode − 1
// computed tokens (the tool call's last token is sampled, not yet computed).
// MemoryOverTime is the area under the call's own memory curve, in
// tokens·seconds:
//
//	before   = staircase(Prompt on 0) + Σ_{k=1}^{D−1} IterTime(r+1)·(Prompt + k)
//	Preserve = before + C·ToolTime         + staircase(1+R on C)   + after
//	Swap     = before + 2·C·SwapTime(C)    + staircase(1+R on C)   + after
//	Discard  = before                      + staircase(C+1+R on 0) + after
//	after    = Σ_{k=1}^{M−1} IterTime(r+1)·(C + 1 + R + k)
//
// with R = ToolReturn and M = PostDecode. Preserve holds C through the tool;
// swap holds C on the device while it is copied out and again while it is
// copied in (the swap-in spike of Figure 4c) and nothing in between; discard
// holds nothing during the tool and recomputes C, chunked, together with the
// tool's return before decoding resumes (Figure 4b).
//
// The public LAMPS code (MARS) ranks by before + tokens·api_time + after
// (preserve), before + integral(before+after) (discard) and before + 2·swap +
// 0.1·api_time + after (swap), with before/after the chunked time-integrals
// f_s·n(n+1)/2·c_h and swap = blocks·(blocks/2)/2. The three shapes are the
// same as here; the differences are deliberate: decode tokens are charged one
// iteration of IterTime(r+1) each (MARS charges them as if prefilled in c_h
// chunks, which makes long outputs look cheap), the swap charge is the
// measured transfer time of this engine's swap path times the memory held
// while it runs (MARS's blocks²/4 is the same quadratic shape with a fixed
// constant), and there is no api_time term for swap: host memory is not the
// device memory that the ranking economises.
//
// Score adds to MemoryOverTime what the chosen handling costs the other
// running calls, C_other times the time it stalls them (discard: PerToken·C
// of recompute, swap: 2·SwapTime(C); preserve: nothing), i.e. the C_other
// parts of the waste formulas. LAMPS §4.2 says it "combine[s] this waste with
// our estimation of the context size for batched requests"; with C_other = 0
// Score is MemoryOverTime. Rank is MemoryOverTime under the least-waste kind
// (chosen with C_other = 0); RankAt is Score under the least-waste kind for a
// given Load. The LAMPS Figure 3 example needs the latter: by its own memory
// alone the discarded call R2 (4 units·iterations) ranks ahead of the swapped
// R3 (6), while the paper runs R3 first; charging R2's recompute for the
// memory resident beside it gives the paper's order (lamps_example_test.go).
package handling
