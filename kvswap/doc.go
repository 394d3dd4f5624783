// Package kvswap is the host tier of paged KV blocks and the transfers that
// move blocks between the device pool and that tier.
//
// The engine's block manager owns device block ids (0..N-1) and decides what to
// swap; kvswap owns the rest:
//
//   - HostTier: host-memory slots with a capacity in blocks. Alloc is all or
//     nothing; when it fails the engine discards the call's KV instead (a full
//     host tier never fails a call). Free panics on a double free or an unknown
//     slot, since either is an engine bug. With storeBytes=false the tier only
//     counts slots (the simulator); with storeBytes=true it holds the bytes (the
//     CPU executor, later a CUDA device).
//   - Device: the device KV pool as transfers see it (Gather/Scatter of whole
//     blocks). MemoryDevice implements it over Go memory; a CUDA device will
//     live in kvswap/cuda behind the build tag cuda.
//   - Mover: carries out one iteration's swap-outs and swap-ins, either one
//     device transfer per block (vLLM, InferCept) or one gathered transfer per
//     direction per iteration (Autellix §5). Its staging buffer and index
//     scratch are reused across iterations: in steady state a swap allocates
//     nothing.
//   - Budget: a per-iteration limit on swapped blocks, reset every iteration.
//
// What a transfer costs on a host link (per-transfer overhead + bytes over
// bandwidth) is handling.CostModel's, the one cost model of computing and
// moving KV that handling decisions weigh and the simulator prices with.
//
// # Where the gathered transfer helps, and where it does not
//
// On a GPU, the device pool lives in HBM and the host tier in (pinned) host
// memory across PCIe. vLLM issues one cudaMemcpyAsync per block, and InferCept
// one per block per layer (K and V caches are separate tensors, so a long
// context becomes thousands of copies). Each copy pays a fixed launch and DMA
// setup cost and small copies do not reach the link's bandwidth. Gathering the
// blocks first into one contiguous device buffer costs an extra pass at HBM
// speed, roughly fifty times the host link's (A100 40GB: 1.56 TB/s HBM against
// 32 GB/s per direction for PCIe 4 x16; H100: 3.35 TB/s against 64 GB/s for
// PCIe 5), and then one DMA moves everything at close to link bandwidth. Autellix reports
// 3-7x lower swap time from this kernel. handling.CostModel expresses exactly
// that trade: SwapPerTransfer is paid once per direction per iteration when
// SwapGathered, once per block (times SwapCopiesPerBlock) otherwise.
//
// On the CPU executor both tiers are ordinary Go memory and every "transfer" is
// a memmove. The per-call overhead of copy (tens of nanoseconds) is negligible
// against the memmove of a KV block (a 256 KiB block takes tens of
// microseconds), so gathering buys nothing there. Worse, when the host slots of
// an iteration are not consecutive, the gathered path copies every byte twice
// (device -> staging, staging -> slots). Mover avoids the second copy when the
// slots are consecutive (a fresh or well-ordered tier), gathering straight into
// the host tier's backing array. The package benchmarks (go test -bench .
// ./kvswap/) show per-block, gathered and a single plain copy of the same bytes
// side by side; on CPU memory they are all bounded by memory bandwidth and the
// staged gather is the slowest. The gathered mode exists on the CPU so the same
// engine path, accounting and tests run before a CUDA device exists; the
// speed-up it stands for is the simulator's (handling.CostModel), not the CPU's. The
// CPU executor should use per-block mode.
//
// The host side matters for a GPU too: when an iteration's host slots are not
// consecutive, the one DMA lands in the staging buffer and is then copied to
// the slots at host-memory speed, the same order as the PCIe link. A CUDA mover
// should keep an iteration's slots consecutive (the tier hands out ascending
// runs while it is not fragmented) or overlap that copy with compute.
//
// None of the types here is safe for concurrent use: the engine's iteration
// loop owns them.
package kvswap
