#include "textflag.h"

// func dotQ8I16x4AVX2(nb int, w *byte, x0, x1, x2, x3 *int16, d0, d1, d2, d3 *float32, lut *float32, out *[4]float32)
//
// dotQ8I16AVX2 (quant_amd64.s) for four activation rows at once: each Q8_0
// block is read and widened to int16 once, then multiplied with the block
// of every row (VPMADDWD), converted, and added in with the weight's scale
// times that row's (x0..x3: int16 per block of 32, d0..d3: their scales).
// Each row's sums are made in the order dotQ8I16AVX2 makes them, so the
// results are the same bit for bit.
TEXT ·dotQ8I16x4AVX2(SB), NOSPLIT, $0-96
	MOVQ   nb+0(FP), CX
	MOVQ   w+8(FP), SI
	MOVQ   x0+16(FP), DI
	MOVQ   x1+24(FP), BX
	MOVQ   x2+32(FP), DX
	MOVQ   x3+40(FP), R9
	MOVQ   d0+48(FP), R10
	MOVQ   d1+56(FP), R11
	MOVQ   d2+64(FP), R12
	MOVQ   d3+72(FP), R13
	MOVQ   lut+80(FP), R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JZ     q8x4_reduce

q8x4_loop:
	MOVWLZX      (SI), AX
	VMOVSS       (R8)(AX*4), X8
	VPMOVSXBW    2(SI), Y0
	VPMOVSXBW    18(SI), Y1

	VMULSS       (R10), X8, X9
	VBROADCASTSS X9, Y9
	VPMADDWD     (DI), Y0, Y2
	VPMADDWD     32(DI), Y1, Y3
	VPADDD       Y3, Y2, Y2
	VCVTDQ2PS    Y2, Y2
	VFMADD231PS  Y2, Y9, Y4

	VMULSS       (R11), X8, X9
	VBROADCASTSS X9, Y9
	VPMADDWD     (BX), Y0, Y2
	VPMADDWD     32(BX), Y1, Y3
	VPADDD       Y3, Y2, Y2
	VCVTDQ2PS    Y2, Y2
	VFMADD231PS  Y2, Y9, Y5

	VMULSS       (R12), X8, X9
	VBROADCASTSS X9, Y9
	VPMADDWD     (DX), Y0, Y2
	VPMADDWD     32(DX), Y1, Y3
	VPADDD       Y3, Y2, Y2
	VCVTDQ2PS    Y2, Y2
	VFMADD231PS  Y2, Y9, Y6

	VMULSS       (R13), X8, X9
	VBROADCASTSS X9, Y9
	VPMADDWD     (R9), Y0, Y2
	VPMADDWD     32(R9), Y1, Y3
	VPADDD       Y3, Y2, Y2
	VCVTDQ2PS    Y2, Y2
	VFMADD231PS  Y2, Y9, Y7

	ADDQ $34, SI
	ADDQ $64, DI
	ADDQ $64, BX
	ADDQ $64, DX
	ADDQ $64, R9
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ CX
	JNZ  q8x4_loop

q8x4_reduce:
	MOVQ         out+88(FP), AX
	VEXTRACTF128 $1, Y4, X12
	VADDPS       X12, X4, X4
	VEXTRACTF128 $1, Y5, X13
	VADDPS       X13, X5, X5
	VEXTRACTF128 $1, Y6, X14
	VADDPS       X14, X6, X6
	VEXTRACTF128 $1, Y7, X15
	VADDPS       X15, X7, X7
	VHADDPS      X5, X4, X4
	VHADDPS      X7, X6, X6
	VHADDPS      X6, X4, X4
	VMOVUPS      X4, (AX)
	VZEROUPPER
	RET
