package cpu

import "github.com/pitstop-llm/pitstop/models/kernel"

// KernelISA names the instruction set the executor's matrix products run
// on this CPU: the best models/kernel has for it.
func KernelISA() kernel.ISA { return kernel.Available()[0] }
