package kvswap

import "fmt"

// Move is one block's transfer: device block id <-> host slot.
type Move struct{ Device, Host int }

// MoverStats are a Mover's totals since it was made.
type MoverStats struct {
	OutBytes, InBytes   int64 // bytes swapped out (device->host) and in
	OutBlocks, InBlocks int64 // blocks swapped out and in
	// Transfers counts device transfers (Gather/Scatter calls): one per block
	// in per-block mode, one per direction per non-empty call when gathered.
	// This is what a GPU pays a fixed setup cost for.
	Transfers int64
	// StagedBytes counts bytes that went through the staging buffer: gathered
	// moves whose host slots were not consecutive, copied twice on the host.
	StagedBytes int64
}

// Mover carries out one iteration's swaps between a Device and a HostTier.
//
// Per-block mode issues one device transfer per block, straight to or from
// its host slot (vLLM, InferCept). Gathered mode issues one device transfer per
// direction per call (Autellix §5): all blocks of the call go to one contiguous
// buffer. When the host slots are consecutive that buffer is the host tier's
// own memory; otherwise it is the Mover's staging buffer, which is then copied
// slot by slot on the host. The staging buffer grows to the largest call seen
// and is reused, so steady-state swaps allocate nothing.
//
// When the host tier does not store bytes (the simulator) the Mover moves
// nothing and only accounts; the device may then be nil.
type Mover struct {
	dev      Device
	host     *HostTier
	gathered bool
	bb       int
	staging  []byte
	devIdx   []int // device ids of the current call, reused
	one      [1]int
	stats    MoverStats
}

// NewMover returns a Mover between dev and host. gathered selects one transfer
// per direction per call instead of one per block. It panics when host is nil,
// when host stores bytes but dev is nil, or when their block sizes differ.
func NewMover(dev Device, host *HostTier, gathered bool) *Mover {
	if host == nil {
		panic("kvswap: NewMover: nil host tier")
	}
	if host.store {
		if dev == nil {
			panic("kvswap: NewMover: host tier stores bytes but device is nil")
		}
		if dev.BlockBytes() != host.blockBytes {
			panic(fmt.Sprintf("kvswap: NewMover: device blocks of %d bytes, host slots of %d bytes", dev.BlockBytes(), host.blockBytes))
		}
	}
	return &Mover{dev: dev, host: host, gathered: gathered, bb: host.blockBytes}
}

// Gathered reports whether the Mover gathers each call into one transfer.
func (m *Mover) Gathered() bool { return m.gathered }

// Stats returns the Mover's totals.
func (m *Mover) Stats() MoverStats { return m.stats }

// Reserve grows the staging buffer to hold blocks blocks, so that a later call
// of at most that size allocates nothing (e.g. Reserve(budget limit) at start).
func (m *Mover) Reserve(blocks int) {
	if m.gathered && m.host.store {
		m.stage(blocks)
	}
	if cap(m.devIdx) < blocks {
		m.devIdx = make([]int, 0, blocks)
	}
}

// SwapOut copies each move's device block into its host slot and returns the
// bytes moved. Host slots must be allocated (HostTier.Alloc) and distinct;
// a move to a slot that is not allocated panics. The device blocks stay owned
// by the engine, which frees them afterwards.
func (m *Mover) SwapOut(moves []Move) (bytes int64) {
	if len(moves) == 0 {
		return 0
	}
	m.checkHost(moves, "SwapOut")
	n := len(moves)
	bytes = int64(n) * int64(m.bb)
	m.stats.OutBytes += bytes
	m.stats.OutBlocks += int64(n)
	if !m.gathered {
		m.stats.Transfers += int64(n)
		if m.host.store {
			for _, mv := range moves {
				m.one[0] = mv.Device
				m.dev.Gather(m.one[:], m.host.Slot(mv.Host))
			}
		}
		return bytes
	}
	m.stats.Transfers++
	if !m.host.store {
		return bytes
	}
	idx := m.indices(moves)
	if first, ok := consecutiveHost(moves); ok {
		m.dev.Gather(idx, m.host.span(first, n))
		return bytes
	}
	buf := m.stage(n)
	m.dev.Gather(idx, buf)
	for i, mv := range moves {
		copy(m.host.Slot(mv.Host), buf[i*m.bb:(i+1)*m.bb])
	}
	m.stats.StagedBytes += bytes
	return bytes
}

// SwapIn copies each move's host slot into its device block and returns the
// bytes moved. Host slots must be allocated; the engine frees them afterwards.
// Device blocks must be distinct.
func (m *Mover) SwapIn(moves []Move) (bytes int64) {
	if len(moves) == 0 {
		return 0
	}
	m.checkHost(moves, "SwapIn")
	n := len(moves)
	bytes = int64(n) * int64(m.bb)
	m.stats.InBytes += bytes
	m.stats.InBlocks += int64(n)
	if !m.gathered {
		m.stats.Transfers += int64(n)
		if m.host.store {
			for _, mv := range moves {
				m.one[0] = mv.Device
				m.dev.Scatter(m.host.Slot(mv.Host), m.one[:])
			}
		}
		return bytes
	}
	m.stats.Transfers++
	if !m.host.store {
		return bytes
	}
	idx := m.indices(moves)
	if first, ok := consecutiveHost(moves); ok {
		m.dev.Scatter(m.host.span(first, n), idx)
		return bytes
	}
	buf := m.stage(n)
	for i, mv := range moves {
		copy(buf[i*m.bb:(i+1)*m.bb], m.host.Slot(mv.Host))
	}
	m.dev.Scatter(buf, idx)
	m.stats.StagedBytes += bytes
	return bytes
}

func (m *Mover) checkHost(moves []Move, op string) {
	for _, mv := range moves {
		if mv.Host < 0 || mv.Host >= m.host.capacity {
			panic(fmt.Sprintf("kvswap: Mover.%s: host slot %d out of range (capacity %d)", op, mv.Host, m.host.capacity))
		}
		if !m.host.used[mv.Host] {
			panic(fmt.Sprintf("kvswap: Mover.%s: host slot %d is not allocated", op, mv.Host))
		}
	}
}

// indices returns the device ids of moves in the reused scratch slice.
func (m *Mover) indices(moves []Move) []int {
	idx := m.devIdx[:0]
	for _, mv := range moves {
		idx = append(idx, mv.Device)
	}
	m.devIdx = idx
	return idx
}

// stage returns the staging buffer sized for n blocks, growing it if needed.
func (m *Mover) stage(n int) []byte {
	size := n * m.bb
	if cap(m.staging) < size {
		m.staging = make([]byte, size)
	}
	return m.staging[:size]
}

// consecutiveHost reports whether the moves' host slots are first, first+1, ...
func consecutiveHost(moves []Move) (first int, ok bool) {
	first = moves[0].Host
	for i, mv := range moves {
		if mv.Host != first+i {
			return 0, false
		}
	}
	return first, true
}
