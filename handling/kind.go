package handling

import "strconv"

// Kind is what happens to a call's KV cache while the call waits for a tool.
type Kind uint8

const (
	// Preserve keeps the KV on the device through the tool call.
	Preserve Kind = iota
	// Swap copies the KV to host memory and back when the tool returns.
	Swap
	// Discard frees the KV and recomputes it when the tool returns.
	Discard
)

// NumKinds is the number of kinds; Kind values index [NumKinds] arrays.
const NumKinds = 3

// String returns "preserve", "swap" or "discard".
func (k Kind) String() string {
	switch k {
	case Preserve:
		return "preserve"
	case Swap:
		return "swap"
	case Discard:
		return "discard"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Valid reports whether k is one of the three kinds.
func (k Kind) Valid() bool { return k < NumKinds }
