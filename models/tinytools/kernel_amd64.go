//go:build amd64 && !purego

package tinytools

import "golang.org/x/sys/cpu"

//go:noescape
func kern6x16(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func kern1x16(k int, a *float32, b *float32, ldb int, c *float32)

//go:noescape
func kern6x32(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

var (
	haveAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	haveAVX512 = haveAVX2 && cpu.X86.HasAVX512F
)
