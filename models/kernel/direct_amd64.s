#include "textflag.h"
#include "tile_amd64.h"

// The unpacked kernels of gemmDirect (they were the tiny model's trainer's).

// func direct6x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
//
// C[0:6, 0:16] += A[0:6, 0:k] · B[0:k, 0:16], all row-major with strides in
// elements, neither operand packed (small products: see gemmDirect). AVX2 + FMA.
TEXT ·direct6x16AVX2(SB), NOSPLIT, $0-56
	DIRECT_ARGS
	ZERO_TILE_Y
	TESTQ CX, CX
	JZ    direct6x16AVX2_store

direct6x16AVX2_loop:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	FMA_TILE_Y((SI), (SI)(R8*1), (SI)(R8*2), (R11), (R11)(R8*1), (R11)(R8*2))
	ADDQ    $4, SI
	ADDQ    $4, R11
	ADDQ    R9, DI
	DECQ    CX
	JNZ     direct6x16AVX2_loop

direct6x16AVX2_store:
	STORE_TILE_Y
	VZEROUPPER
	RET

// func direct1x16AVX2(k int, a *float32, b *float32, ldb int, c *float32)
//
// C[0, 0:16] += A[0, 0:k] · B[0:k, 0:16].
TEXT ·direct1x16AVX2(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	MOVQ c+32(FP), DX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TESTQ CX, CX
	JZ    direct1x16_store

direct1x16_loop:
	VBROADCASTSS (SI), Y14
	VFMADD231PS  (DI), Y14, Y0
	VFMADD231PS  32(DI), Y14, Y1
	ADDQ         $4, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          direct1x16_loop

direct1x16_store:
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DX)
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET

// func direct6x32AVX512(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
//
// C[0:6, 0:32] += A[0:6, 0:k] · B[0:k, 0:32], all row-major with strides in
// elements, neither operand packed (small products: see gemmDirect). AVX-512F.
TEXT ·direct6x32AVX512(SB), NOSPLIT, $0-56
	DIRECT_ARGS
	ZERO_TILE_Z
	TESTQ CX, CX
	JZ    direct6x32AVX512_store

direct6x32AVX512_loop:
	VMOVUPS (DI), Z12
	VMOVUPS 64(DI), Z13
	FMA_TILE_Z((SI), (SI)(R8*1), (SI)(R8*2), (R11), (R11)(R8*1), (R11)(R8*2))
	ADDQ    $4, SI
	ADDQ    $4, R11
	ADDQ    R9, DI
	DECQ    CX
	JNZ     direct6x32AVX512_loop

direct6x32AVX512_store:
	STORE_TILE_Z
	VZEROUPPER
	RET
