package kvswap

import (
	"fmt"
	"math"
)

// Device is the engine's device KV pool as transfers see it. Blocks are ids
// 0..N-1 owned by the engine's block manager; every block holds BlockBytes()
// bytes (all layers, K and V). The CPU executor implements it over Go memory
// (MemoryDevice); a CUDA implementation will follow behind the build tag cuda.
//
// For a GPU, one call of Gather or Scatter is one host-link transfer: the
// implementation packs the blocks into (or unpacks them from) a contiguous
// device buffer and moves it with a single DMA.
type Device interface {
	// BlockBytes is the size of one block in bytes.
	BlockBytes() int
	// Gather copies the given device blocks, in order, into dst
	// (len(dst) == len(blocks)*BlockBytes()).
	Gather(blocks []int, dst []byte)
	// Scatter copies src into the given device blocks, in order
	// (len(src) == len(blocks)*BlockBytes()).
	Scatter(src []byte, blocks []int)
}

// MemoryDevice is a Device over one []byte of numBlocks*blockBytes bytes.
type MemoryDevice struct {
	numBlocks  int
	blockBytes int
	data       []byte
}

var _ Device = (*MemoryDevice)(nil)

// NewMemoryDevice returns a zeroed pool of numBlocks blocks of blockBytes
// each. It panics on a negative count, a non-positive block size or overflow.
func NewMemoryDevice(numBlocks, blockBytes int) *MemoryDevice {
	if numBlocks < 0 {
		panic(fmt.Sprintf("kvswap: NewMemoryDevice: negative block count %d", numBlocks))
	}
	if blockBytes <= 0 {
		panic(fmt.Sprintf("kvswap: NewMemoryDevice: block size %d bytes must be positive", blockBytes))
	}
	if numBlocks > math.MaxInt/blockBytes {
		panic(fmt.Sprintf("kvswap: NewMemoryDevice: %d blocks of %d bytes overflow int", numBlocks, blockBytes))
	}
	return &MemoryDevice{numBlocks: numBlocks, blockBytes: blockBytes, data: make([]byte, numBlocks*blockBytes)}
}

// NumBlocks is the number of blocks in the pool.
func (d *MemoryDevice) NumBlocks() int { return d.numBlocks }

// BlockBytes is the size of one block in bytes.
func (d *MemoryDevice) BlockBytes() int { return d.blockBytes }

// Block returns the bytes of block i (length and capacity BlockBytes()). It
// panics when i is out of range.
func (d *MemoryDevice) Block(i int) []byte {
	d.check(i, "Block")
	lo, hi := i*d.blockBytes, (i+1)*d.blockBytes
	return d.data[lo:hi:hi]
}

// Gather copies blocks, in order, into dst. Runs of consecutive block ids are
// copied with one copy each.
func (d *MemoryDevice) Gather(blocks []int, dst []byte) {
	d.checkLen(len(blocks), len(dst), "Gather")
	bb := d.blockBytes
	for i := 0; i < len(blocks); {
		j := d.run(blocks, i, "Gather")
		copy(dst[i*bb:j*bb], d.data[blocks[i]*bb:(blocks[i]+j-i)*bb])
		i = j
	}
}

// Scatter copies src into blocks, in order. Runs of consecutive block ids are
// copied with one copy each.
func (d *MemoryDevice) Scatter(src []byte, blocks []int) {
	d.checkLen(len(blocks), len(src), "Scatter")
	bb := d.blockBytes
	for i := 0; i < len(blocks); {
		j := d.run(blocks, i, "Scatter")
		copy(d.data[blocks[i]*bb:(blocks[i]+j-i)*bb], src[i*bb:j*bb])
		i = j
	}
}

// run checks blocks[i:] and returns the end of the run of consecutive ids
// starting at i.
func (d *MemoryDevice) run(blocks []int, i int, op string) int {
	d.check(blocks[i], op)
	j := i + 1
	for j < len(blocks) && blocks[j] == blocks[j-1]+1 {
		d.check(blocks[j], op)
		j++
	}
	return j
}

func (d *MemoryDevice) check(i int, op string) {
	if i < 0 || i >= d.numBlocks {
		panic(fmt.Sprintf("kvswap: MemoryDevice.%s: block %d out of range (%d blocks)", op, i, d.numBlocks))
	}
}

func (d *MemoryDevice) checkLen(blocks, buf int, op string) {
	if buf != blocks*d.blockBytes {
		panic(fmt.Sprintf("kvswap: MemoryDevice.%s: buffer of %d bytes for %d blocks of %d bytes", op, buf, blocks, d.blockBytes))
	}
}
