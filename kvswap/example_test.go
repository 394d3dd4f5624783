package kvswap_test

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/handling"
	"github.com/pitstop-llm/pitstop/kvswap"
)

// One iteration of the engine: a paused call's three device blocks go to the
// host tier, then come back into other device blocks.
func ExampleMover() {
	const blockBytes = 4096
	dev := kvswap.NewMemoryDevice(8, blockBytes)
	host := kvswap.NewHostTier(16, blockBytes, true)
	mover := kvswap.NewMover(dev, host, true)
	budget := kvswap.NewBudget(32)

	budget.Reset() // start of the iteration
	deviceBlocks := []int{5, 2, 7}
	slots, ok := host.Alloc(len(deviceBlocks))
	if !ok || !budget.Take(len(deviceBlocks)) {
		fmt.Println("discard instead")
		return
	}
	out := make([]kvswap.Move, len(slots))
	for i := range slots {
		out[i] = kvswap.Move{Device: deviceBlocks[i], Host: slots[i]}
	}
	fmt.Println("out:", mover.SwapOut(out), "bytes; host used", host.Used())

	budget.Reset() // a later iteration: the tool returned
	in := make([]kvswap.Move, len(slots))
	for i, b := range []int{0, 1, 3} {
		in[i] = kvswap.Move{Device: b, Host: slots[i]}
	}
	budget.Take(len(in))
	fmt.Println("in:", mover.SwapIn(in), "bytes")
	host.Free(slots)
	fmt.Println("host used", host.Used(), "transfers", mover.Stats().Transfers)

	// 4,096-byte blocks: 256 tokens of 16 bytes.
	cost := handling.CostModel{KVBytesPerToken: 16, BlockTokens: 256, SwapPerTransfer: 10e-6, SwapBandwidth: 25e9, SwapGathered: true}
	fmt.Printf("modelled swap-out: %.2f µs\n", cost.TransferTime(len(out))*1e6)
	// Output:
	// out: 12288 bytes; host used 3
	// in: 12288 bytes
	// host used 0 transfers 2
	// modelled swap-out: 10.49 µs
}
