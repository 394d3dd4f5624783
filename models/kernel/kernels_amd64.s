#include "textflag.h"
#include "tile_amd64.h"

// func microAVX2(kc int, a, b, c *float32, ldc int)
//
// C[0:6, 0:16] += A·B for A packed kc×6 (a[p·6+i]) and B packed kc×16
// (b[p·16+j]); C row-major with row stride ldc elements. AVX2 + FMA.
TEXT ·microAVX2(SB), NOSPLIT, $0-40
	MICRO_ARGS
	ZERO_TILE_Y
	TESTQ CX, CX
	JZ    microAVX2_store

microAVX2_loop:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	FMA_TILE_Y(0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	ADDQ    $24, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     microAVX2_loop

microAVX2_store:
	STORE_TILE_Y
	VZEROUPPER
	RET

// func microAVX512(kc int, a, b, c *float32, ldc int)
//
// C[0:6, 0:32] += A·B for A packed kc×6 (a[p·6+i]) and B packed kc×32
// (b[p·32+j]); C row-major with row stride ldc elements. AVX-512F.
TEXT ·microAVX512(SB), NOSPLIT, $0-40
	MICRO_ARGS
	ZERO_TILE_Z
	TESTQ CX, CX
	JZ    microAVX512_store

microAVX512_loop:
	VMOVUPS (DI), Z12
	VMOVUPS 64(DI), Z13
	FMA_TILE_Z(0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	ADDQ    $24, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     microAVX512_loop

microAVX512_store:
	STORE_TILE_Z
	VZEROUPPER
	RET

// func dotAVX2(n int, x, y *float32) float32
//
// Σ_{i<n} x[i]·y[i]; n a multiple of 8.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	SHRQ   $3, CX

dot_loop16:
	CMPQ        CX, $2
	JB          dot_tail8
	VMOVUPS     (SI), Y2
	VFMADD231PS (DI), Y2, Y0
	VMOVUPS     32(SI), Y3
	VFMADD231PS 32(DI), Y3, Y1
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $2, CX
	JMP         dot_loop16

dot_tail8:
	TESTQ       CX, CX
	JZ          dot_reduce
	VMOVUPS     (SI), Y2
	VFMADD231PS (DI), Y2, Y0

dot_reduce:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func axpyAVX2(n int, alpha float32, x, y *float32)
//
// y[i] += alpha·x[i] for i < n; n a multiple of 8.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSS alpha+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         y+24(FP), DI
	SHRQ         $3, CX
	JZ           axpy_done

axpy_loop:
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNZ         axpy_loop

axpy_done:
	VZEROUPPER
	RET

// func packBT8AVX2(kc int, b *float32, ldb int, dst *float32, nr int)
//
// dst[p·nr+q] = b[q·ldb+p] for q < 8, p < kc (kc a multiple of 8; ldb and
// nr in elements): eight rows of B stored [n×k] become eight columns of a
// packed panel, by 8×8 transposes in registers.
TEXT ·packBT8AVX2(SB), NOSPLIT, $0-40
	MOVQ kc+0(FP), CX
	MOVQ b+8(FP), SI
	MOVQ ldb+16(FP), R8
	MOVQ dst+24(FP), DI
	MOVQ nr+32(FP), R9
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (SI)(R8*2), R11
	ADDQ R8, R11         // row 3
	LEAQ (R11)(R8*2), R12
	ADDQ R8, R12         // row 6
	LEAQ (DI)(R9*2), R13
	ADDQ R9, R13         // k-row 3 of dst
	LEAQ (R13)(R9*2), R14
	ADDQ R9, R14         // k-row 6
	MOVQ R9, R10
	SHLQ $3, R10         // 8 k-rows of dst
	SHRQ $3, CX
	JZ   packBT8_done

packBT8_loop:
	VMOVUPS    (SI), Y0
	VMOVUPS    (SI)(R8*1), Y1
	VMOVUPS    (SI)(R8*2), Y2
	VMOVUPS    (R11), Y3
	VMOVUPS    (R11)(R8*1), Y4
	VMOVUPS    (R11)(R8*2), Y5
	VMOVUPS    (R12), Y6
	VMOVUPS    (R12)(R8*1), Y7
	VUNPCKLPS  Y1, Y0, Y8
	VUNPCKHPS  Y1, Y0, Y9
	VUNPCKLPS  Y3, Y2, Y10
	VUNPCKHPS  Y3, Y2, Y11
	VUNPCKLPS  Y5, Y4, Y12
	VUNPCKHPS  Y5, Y4, Y13
	VUNPCKLPS  Y7, Y6, Y14
	VUNPCKHPS  Y7, Y6, Y15
	VSHUFPS    $0x44, Y10, Y8, Y0
	VSHUFPS    $0xEE, Y10, Y8, Y1
	VSHUFPS    $0x44, Y11, Y9, Y2
	VSHUFPS    $0xEE, Y11, Y9, Y3
	VSHUFPS    $0x44, Y14, Y12, Y4
	VSHUFPS    $0xEE, Y14, Y12, Y5
	VSHUFPS    $0x44, Y15, Y13, Y6
	VSHUFPS    $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS    Y8, (DI)
	VMOVUPS    Y9, (DI)(R9*1)
	VMOVUPS    Y10, (DI)(R9*2)
	VMOVUPS    Y11, (R13)
	VMOVUPS    Y12, (R13)(R9*1)
	VMOVUPS    Y13, (R13)(R9*2)
	VMOVUPS    Y14, (R14)
	VMOVUPS    Y15, (R14)(R9*1)
	ADDQ       $32, SI
	ADDQ       $32, R11
	ADDQ       $32, R12
	ADDQ       R10, DI
	ADDQ       R10, R13
	ADDQ       R10, R14
	DECQ       CX
	JNZ        packBT8_loop

packBT8_done:
	VZEROUPPER
	RET
