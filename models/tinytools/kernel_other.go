//go:build !amd64 || purego

package tinytools

const (
	haveAVX2   = false
	haveAVX512 = false
)

func kern6x16(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	panic("tinytools: no assembly kernel")
}

func kern1x16(k int, a *float32, b *float32, ldb int, c *float32) {
	panic("tinytools: no assembly kernel")
}

func kern6x32(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	panic("tinytools: no assembly kernel")
}
