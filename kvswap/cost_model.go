package kvswap

// CostModel is the time of moving KV blocks one way over a host link:
// PerTransfer fixed cost for every transfer plus bytes/Bandwidth.
//
// Gathered: one transfer per direction per iteration (Autellix §5). Per-block:
// one transfer per block, times Layers when copies are issued per layer as
// InferCept does (Layers <= 1: one copy per block). The bytes are the same
// either way; per-layer copies only split each block into Layers pieces. A
// gathered transfer also pays a device-side gather pass at device-memory speed,
// which is not modelled: it is one to two orders of magnitude faster than a
// host link. Directions are costed separately; whether swap-out and swap-in of
// one iteration overlap (PCIe is full duplex) is the caller's decision.
type CostModel struct {
	PerTransfer float64 // seconds per transfer (launch + DMA setup)
	Bandwidth   float64 // bytes per second of the host link; <= 0: unbounded
	Layers      int     // per-block copies per block (per-layer copies); <= 1: one
	Gathered    bool    // one transfer per direction per iteration
}

// Transfers is the number of transfers that moving blocks blocks costs.
func (c CostModel) Transfers(blocks int) int {
	if blocks <= 0 {
		return 0
	}
	if c.Gathered {
		return 1
	}
	return blocks * max(c.Layers, 1)
}

// Time is the seconds to move blocks blocks of blockBytes bytes each (the
// whole block, all layers) in one direction in one iteration.
func (c CostModel) Time(blocks, blockBytes int) float64 {
	if blocks <= 0 {
		return 0
	}
	t := float64(c.Transfers(blocks)) * c.PerTransfer
	if c.Bandwidth > 0 {
		t += float64(blocks) * float64(blockBytes) / c.Bandwidth
	}
	return t
}
