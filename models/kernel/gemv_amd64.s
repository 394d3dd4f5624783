#include "textflag.h"

// The decode kernels: eight rows of A, packed [kc/16][8][16] (the 16
// elements of each row at a step side by side, so that a step's A is one
// 512-byte run that stays in L1), against groups of three rows of B stored
// [n×k] (row j of a group at b + j·ldb, groups 3·ldb apart):
// out[g·24 + j·8 + i] (+)= Σ_{p<kc} a_i[p]·b_{3g+j}[p] for kc a multiple of
// 16; acc != 0 adds to out instead of storing. Three rows of B are streamed
// at once so that each load of A serves three of them.
//
// Prefetch, into L2, two streams: 192 bytes per step in address order
// from next, the part of the following block of B that the caller asks
// for (the caller keeps that stream running block after block); and the
// next group's three rows of B at the step's offset (R12), one group
// ahead. Without the first the product ran at 0.55 of its speed on the
// development machine (one thread, one side-by-side run); the second,
// in place of a prefetch into L1 of the rows being read 512 bytes ahead,
// raised eight rows from 0.6 to about 0.7 of the read stream
// (docs/results-structure.md, "The roof").
#define PREFETCH_B \
	PREFETCHT1 (R9); \
	PREFETCHT1 64(R9); \
	PREFETCHT1 128(R9); \
	ADDQ       $192, R9; \
	PREFETCHT1 (R12); \
	PREFETCHT1 (R12)(AX*1); \
	PREFETCHT1 (R12)(AX*2); \
	ADDQ       $64, R12

#define DECODE_ARGS \
	MOVQ kc+0(FP), R8; \
	MOVQ a+8(FP), R10; \
	MOVQ b+16(FP), R13; \
	MOVQ ldb+24(FP), AX; \
	MOVQ groups+32(FP), BX; \
	MOVQ next+40(FP), R9; \
	MOVQ out+48(FP), DX; \
	MOVQ acc+56(FP), R11; \
	SHLQ $2, AX; \
	SHRQ $4, R8

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

// FMA3_Z adds the 16 elements of A at addr times the three vectors of B
// (Z24-Z26) to accumulators c0, c1, c2.
#define FMA3_Z(addr, c0, c1, c2) \
	VMOVUPS     addr, Z27; \
	VFMADD231PS Z24, Z27, c0; \
	VFMADD231PS Z25, Z27, c1; \
	VFMADD231PS Z26, Z27, c2

// FOLD_Z adds the upper half of z to its lower half (the low 256 bits of z).
#define FOLD_Z(z) \
	VEXTRACTF64X4 $1, z, Y28; \
	VADDPS        Z28, z, z

// func decode8x3AVX512(kc int, a, b *float32, ldb, groups int, next, out *float32, acc int)
//
// Accumulator Z(8j+i) holds row i of A times row j of the group.
TEXT ·decode8x3AVX512(SB), NOSPLIT, $0-64
	DECODE_ARGS

decodez_group:
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
	MOVQ   R8, CX
	MOVQ   R10, SI
	MOVQ   R13, DI
	LEAQ   (R13)(AX*2), R12
	ADDQ   AX, R12
	TESTQ  CX, CX
	JZ     decodez_reduce

decodez_loop:
	PREFETCH_B
	VMOVUPS (DI), Z24
	VMOVUPS (DI)(AX*1), Z25
	VMOVUPS (DI)(AX*2), Z26
	FMA3_Z((SI), Z0, Z8, Z16)
	FMA3_Z(64(SI), Z1, Z9, Z17)
	FMA3_Z(128(SI), Z2, Z10, Z18)
	FMA3_Z(192(SI), Z3, Z11, Z19)
	FMA3_Z(256(SI), Z4, Z12, Z20)
	FMA3_Z(320(SI), Z5, Z13, Z21)
	FMA3_Z(384(SI), Z6, Z14, Z22)
	FMA3_Z(448(SI), Z7, Z15, Z23)
	ADDQ    $64, DI
	ADDQ    $512, SI
	DECQ    CX
	JNZ     decodez_loop

decodez_reduce:
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
	// The VEX-encoded reductions reach only registers 0-15: row 2's
	// accumulators move down into registers that rows 0 and 1's sums (Y1,
	// Y9) leave free.
	REDUCE8_Y(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	REDUCE8_Y(Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	VMOVAPS   Z16, Z0
	VMOVAPS   Z17, Z3
	VMOVAPS   Z18, Z2
	VMOVAPS   Z19, Z11
	VMOVAPS   Z20, Z4
	VMOVAPS   Z21, Z5
	VMOVAPS   Z22, Z6
	VMOVAPS   Z23, Z7
	REDUCE8_Y(Y0, Y3, Y2, Y11, Y4, Y5, Y6, Y7)
	TESTQ     R11, R11
	JZ        decodez_store
	VADDPS    (DX), Y1, Y1
	VADDPS    32(DX), Y9, Y9
	VADDPS    64(DX), Y3, Y3

decodez_store:
	VMOVUPS Y1, (DX)
	VMOVUPS Y9, 32(DX)
	VMOVUPS Y3, 64(DX)
	ADDQ    $96, DX
	LEAQ    (R13)(AX*2), R13
	ADDQ    AX, R13
	DECQ    BX
	JNZ     decodez_group
	VZEROUPPER
	RET

// FMA3_Y adds the 8 elements of A at addr times the three vectors of B
// (Y12-Y14) to accumulators c0, c1, c2.
#define FMA3_Y(addr, c0, c1, c2) \
	VMOVUPS     addr, Y15; \
	VFMADD231PS Y12, Y15, c0; \
	VFMADD231PS Y13, Y15, c1; \
	VFMADD231PS Y14, Y15, c2

// STEP_Y is one 8-element step at byte offset off of four rows of A
// (packed: 64 bytes apart from SI) against the group's three rows of B.
#define STEP_Y(off) \
	VMOVUPS off(DI), Y12; \
	VMOVUPS off(DI)(AX*1), Y13; \
	VMOVUPS off(DI)(AX*2), Y14; \
	FMA3_Y(off(SI), Y0, Y4, Y8); \
	FMA3_Y(off+64(SI), Y1, Y5, Y9); \
	FMA3_Y(off+128(SI), Y2, Y6, Y10); \
	FMA3_Y(off+192(SI), Y3, Y7, Y11)

#define ZERO12_Y \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// STORE4_Y reduces the twelve accumulators to rows 0-3 (or 4-7) of the
// group's three outputs at DX (+16 bytes for rows 4-7), adding to them
// when R11 != 0.
#define STORE4_Y(lbl) \
	REDUCE4_Y(Y0, Y1, Y2, Y3, X0, X1); \
	REDUCE4_Y(Y4, Y5, Y6, Y7, X4, X5); \
	REDUCE4_Y(Y8, Y9, Y10, Y11, X8, X9); \
	TESTQ  R11, R11; \
	JZ     lbl; \
	VADDPS (DX), X0, X0; \
	VADDPS 32(DX), X4, X4; \
	VADDPS 64(DX), X8, X8; \
lbl: \
	VMOVUPS X0, (DX); \
	VMOVUPS X4, 32(DX); \
	VMOVUPS X8, 64(DX)

// func decode8x3AVX2(kc int, a, b *float32, ldb, groups int, next, out *float32, acc int)
//
// Sixteen registers hold four rows' accumulators for three rows of B
// (Y(4j+i)): rows 0-3 of A over the chunk, then rows 4-7, the second pass
// reading the group's rows of B again from L1 (the first one prefetches).
TEXT ·decode8x3AVX2(SB), NOSPLIT, $0-64
	DECODE_ARGS

decodey_group:
	ZERO12_Y
	MOVQ  R8, CX
	MOVQ  R10, SI
	MOVQ  R13, DI
	LEAQ  (R13)(AX*2), R12
	ADDQ  AX, R12
	TESTQ CX, CX
	JZ    decodey_reduce0

decodey_loop0:
	PREFETCH_B
	STEP_Y(0)
	STEP_Y(32)
	ADDQ $64, DI
	ADDQ $512, SI
	DECQ CX
	JNZ  decodey_loop0

decodey_reduce0:
	STORE4_Y(decodey_store0)
	ZERO12_Y
	MOVQ  R8, CX
	LEAQ  256(R10), SI
	MOVQ  R13, DI
	TESTQ CX, CX
	JZ    decodey_reduce1

decodey_loop1:
	STEP_Y(0)
	STEP_Y(32)
	ADDQ $64, DI
	ADDQ $512, SI
	DECQ CX
	JNZ  decodey_loop1

decodey_reduce1:
	ADDQ $16, DX
	STORE4_Y(decodey_store1)
	ADDQ $80, DX
	LEAQ (R13)(AX*2), R13
	ADDQ AX, R13
	DECQ BX
	JNZ  decodey_group
	VZEROUPPER
	RET
