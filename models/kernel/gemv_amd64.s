#include "textflag.h"

// The decode kernels: eight rows of A against three rows of B stored
// [n×k], out[j·8+i] = Σ_{p<k} a[i·lda+p]·bj[p] for i < 8, j < 3 (k a
// multiple of 16, lda in elements). Three rows of B are streamed at once
// so that each load of A (from L1 or L2) serves three rows of B: one row
// at a time, the loads of the eight rows of A bound the product instead of
// the memory. The rows of B are prefetched twice: each PF bytes ahead into
// L1, and the rows of the next call (next, 12·k bytes on) into L2, in
// order, 192 bytes per iteration. With only the near prefetch, eight rows
// read the weights at 0.38 of the memory's read speed per CPU-second on
// the development machine; with the far one too, 0.47.
#define PF 512

#define PREFETCH_B \
	PREFETCHT0 PF(DI); \
	PREFETCHT0 PF(R12); \
	PREFETCHT0 PF(R13); \
	PREFETCHT1 (R9); \
	PREFETCHT1 64(R9); \
	PREFETCHT1 128(R9)

// REDUCE8_Y sums each of eight vectors r0..r7 horizontally into element i
// of r1 (r0, r2, r4 and r6 are overwritten).
#define REDUCE8_Y(r0, r1, r2, r3, r4, r5, r6, r7) \
	VHADDPS    r1, r0, r0; \
	VHADDPS    r3, r2, r2; \
	VHADDPS    r5, r4, r4; \
	VHADDPS    r7, r6, r6; \
	VHADDPS    r2, r0, r0; \
	VHADDPS    r6, r4, r4; \
	VPERM2F128 $0x20, r4, r0, r1; \
	VPERM2F128 $0x31, r4, r0, r2; \
	VADDPS     r2, r1, r1

// REDUCE4_Y sums each of four vectors r0..r3 horizontally into element i
// of x0 (the low half of r0; r1 and r2 are overwritten).
#define REDUCE4_Y(r0, r1, r2, r3, x0, x1) \
	VHADDPS      r1, r0, r0; \
	VHADDPS      r3, r2, r2; \
	VHADDPS      r2, r0, r0; \
	VEXTRACTF128 $1, r0, x1; \
	VADDPS       x1, x0, x0

// FMA3_Z adds the row of A at addr times the three vectors of B (Z24-Z26)
// to accumulators c0, c1, c2.
#define FMA3_Z(addr, c0, c1, c2) \
	VMOVUPS     addr, Z27; \
	VFMADD231PS Z24, Z27, c0; \
	VFMADD231PS Z25, Z27, c1; \
	VFMADD231PS Z26, Z27, c2

// FOLD_Z adds the upper half of z to its lower half (the low 256 bits of z).
#define FOLD_Z(z) \
	VEXTRACTF64X4 $1, z, Y28; \
	VADDPS        Z28, z, z

// func rows8x3AVX512(k int, a *float32, lda int, b0, b1, b2, next *float32, out *[24]float32)
//
// Accumulator Z(8j+i) holds row i of A times row j of B; A's rows are at
// SI, SI+lda, SI+2lda, R11 (row 3), SI+4lda, R11+2lda, R10 (row 6),
// R10+lda.
TEXT ·rows8x3AVX512(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b0+24(FP), DI
	MOVQ b1+32(FP), R12
	MOVQ b2+40(FP), R13
	MOVQ next+48(FP), R9
	MOVQ out+56(FP), DX
	SHLQ $2, R8
	LEAQ (SI)(R8*2), R11
	ADDQ R8, R11
	LEAQ (R11)(R8*2), R10
	ADDQ R8, R10
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
	VXORPS Z12, Z12, Z12
	VXORPS Z13, Z13, Z13
	VXORPS Z14, Z14, Z14
	VXORPS Z15, Z15, Z15
	VXORPS Z16, Z16, Z16
	VXORPS Z17, Z17, Z17
	VXORPS Z18, Z18, Z18
	VXORPS Z19, Z19, Z19
	VXORPS Z20, Z20, Z20
	VXORPS Z21, Z21, Z21
	VXORPS Z22, Z22, Z22
	VXORPS Z23, Z23, Z23
	SHRQ   $4, CX
	JZ     rows8x3z_reduce

rows8x3z_loop:
	PREFETCH_B
	VMOVUPS    (DI), Z24
	VMOVUPS    (R12), Z25
	VMOVUPS    (R13), Z26
	FMA3_Z((SI), Z0, Z8, Z16)
	FMA3_Z((SI)(R8*1), Z1, Z9, Z17)
	FMA3_Z((SI)(R8*2), Z2, Z10, Z18)
	FMA3_Z((R11), Z3, Z11, Z19)
	FMA3_Z((SI)(R8*4), Z4, Z12, Z20)
	FMA3_Z((R11)(R8*2), Z5, Z13, Z21)
	FMA3_Z((R10), Z6, Z14, Z22)
	FMA3_Z((R10)(R8*1), Z7, Z15, Z23)
	ADDQ       $64, DI
	ADDQ       $64, R12
	ADDQ       $64, R13
	ADDQ       $64, SI
	ADDQ       $64, R11
	ADDQ       $64, R10
	ADDQ       $192, R9
	DECQ       CX
	JNZ        rows8x3z_loop

rows8x3z_reduce:
	FOLD_Z(Z0)
	FOLD_Z(Z1)
	FOLD_Z(Z2)
	FOLD_Z(Z3)
	FOLD_Z(Z4)
	FOLD_Z(Z5)
	FOLD_Z(Z6)
	FOLD_Z(Z7)
	FOLD_Z(Z8)
	FOLD_Z(Z9)
	FOLD_Z(Z10)
	FOLD_Z(Z11)
	FOLD_Z(Z12)
	FOLD_Z(Z13)
	FOLD_Z(Z14)
	FOLD_Z(Z15)
	FOLD_Z(Z16)
	FOLD_Z(Z17)
	FOLD_Z(Z18)
	FOLD_Z(Z19)
	FOLD_Z(Z20)
	FOLD_Z(Z21)
	FOLD_Z(Z22)
	FOLD_Z(Z23)
	// The VEX-encoded reductions reach only registers 0-15: B row 2's
	// accumulators move down once rows 0 and 1 are stored.
	REDUCE8_Y(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VMOVUPS   Y1, (DX)
	REDUCE8_Y(Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	VMOVUPS   Y9, 32(DX)
	VMOVAPS   Z16, Z0
	VMOVAPS   Z17, Z1
	VMOVAPS   Z18, Z2
	VMOVAPS   Z19, Z3
	VMOVAPS   Z20, Z4
	VMOVAPS   Z21, Z5
	VMOVAPS   Z22, Z6
	VMOVAPS   Z23, Z7
	REDUCE8_Y(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VMOVUPS   Y1, 64(DX)
	VZEROUPPER
	RET

// FMA3_Y adds the row of A at addr times the three vectors of B (Y12-Y14)
// to accumulators c0, c1, c2.
#define FMA3_Y(addr, c0, c1, c2) \
	VMOVUPS     addr, Y15; \
	VFMADD231PS Y12, Y15, c0; \
	VFMADD231PS Y13, Y15, c1; \
	VFMADD231PS Y14, Y15, c2

// STEP_Y is one 8-element step at byte offset off of four rows of A (SI,
// SI+lda, SI+2lda, R11) against the three rows of B (DI, R12, R13).
#define STEP_Y(off) \
	VMOVUPS off(DI), Y12; \
	VMOVUPS off(R12), Y13; \
	VMOVUPS off(R13), Y14; \
	FMA3_Y(off(SI), Y0, Y4, Y8); \
	FMA3_Y(off(SI)(R8*1), Y1, Y5, Y9); \
	FMA3_Y(off(SI)(R8*2), Y2, Y6, Y10); \
	FMA3_Y(off(R11), Y3, Y7, Y11)

// func rows8x3AVX2(k int, a *float32, lda int, b0, b1, b2, next *float32, out *[24]float32)
//
// Sixteen registers hold four rows' accumulators for three rows of B
// (Y(4j+i)): two passes of four rows of A, the second reading the three
// rows of B again from L1.
TEXT ·rows8x3AVX2(SB), NOSPLIT, $0-64
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	MOVQ out+56(FP), DX
	SHLQ $2, R8
	MOVQ $2, BX

rows8x3y_pass:
	MOVQ   k+0(FP), CX
	MOVQ   b0+24(FP), DI
	MOVQ   b1+32(FP), R12
	MOVQ   b2+40(FP), R13
	MOVQ   next+48(FP), R9
	MOVQ   AX, SI
	LEAQ   (SI)(R8*2), R11
	ADDQ   R8, R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	SHRQ   $4, CX
	JZ     rows8x3y_reduce

rows8x3y_loop:
	PREFETCH_B
	STEP_Y(0)
	STEP_Y(32)
	ADDQ       $64, DI
	ADDQ       $64, R12
	ADDQ       $64, R13
	ADDQ       $64, SI
	ADDQ       $64, R11
	ADDQ       $192, R9
	DECQ       CX
	JNZ        rows8x3y_loop

rows8x3y_reduce:
	REDUCE4_Y(Y0, Y1, Y2, Y3, X0, X1)
	VMOVUPS X0, (DX)
	REDUCE4_Y(Y4, Y5, Y6, Y7, X4, X5)
	VMOVUPS X4, 32(DX)
	REDUCE4_Y(Y8, Y9, Y10, Y11, X8, X9)
	VMOVUPS X8, 64(DX)
	LEAQ    (AX)(R8*4), AX
	ADDQ    $16, DX
	DECQ    BX
	JNZ     rows8x3y_pass
	VZEROUPPER
	RET
