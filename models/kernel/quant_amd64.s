#include "textflag.h"

// Quantized rows (quant.go): blocks of 32 weights, a float16 scale first,
// the scale read through lut (float16 bits -> float32, 65536 entries).

DATA q4mask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4mask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q4mask<>(SB), RODATA|NOPTR, $16

DATA q4eight<>+0(SB)/8, $0x0808080808080808
DATA q4eight<>+8(SB)/8, $0x0808080808080808
GLOBL q4eight<>(SB), RODATA|NOPTR, $16

// func dequantQ8AVX2(nb int, w *byte, dst *float32, lut *float32)
//
// Writes nb Q8_0 blocks as 32·nb floats.
TEXT ·dequantQ8AVX2(SB), NOSPLIT, $0-32
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ dst+16(FP), DI
	MOVQ lut+24(FP), R8
	TESTQ CX, CX
	JZ   dq8_done

dq8_loop:
	MOVWLZX      (SI), AX
	VBROADCASTSS (R8)(AX*4), Y8
	VPMOVSXBD    2(SI), Y0
	VPMOVSXBD    10(SI), Y1
	VPMOVSXBD    18(SI), Y2
	VPMOVSXBD    26(SI), Y3
	VCVTDQ2PS    Y0, Y0
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VMULPS       Y8, Y0, Y0
	VMULPS       Y8, Y1, Y1
	VMULPS       Y8, Y2, Y2
	VMULPS       Y8, Y3, Y3
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y1, 32(DI)
	VMOVUPS      Y2, 64(DI)
	VMOVUPS      Y3, 96(DI)
	ADDQ         $34, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          dq8_loop

dq8_done:
	VZEROUPPER
	RET

// func dequantQ4AVX2(nb int, w *byte, dst *float32, lut *float32)
//
// Writes nb Q4_0 blocks as 32·nb floats.
TEXT ·dequantQ4AVX2(SB), NOSPLIT, $0-32
	MOVQ    nb+0(FP), CX
	MOVQ    w+8(FP), SI
	MOVQ    dst+16(FP), DI
	MOVQ    lut+24(FP), R8
	VMOVDQU q4mask<>(SB), X9
	VMOVDQU q4eight<>(SB), X10
	TESTQ   CX, CX
	JZ      dq4_done

dq4_loop:
	MOVWLZX      (SI), AX
	VBROADCASTSS (R8)(AX*4), Y8
	VMOVDQU      2(SI), X6
	VPAND        X9, X6, X7
	VPSRLW       $4, X6, X6
	VPAND        X9, X6, X6
	VPSUBB       X10, X7, X7
	VPSUBB       X10, X6, X6
	VPMOVSXBD    X7, Y0
	VPSRLDQ      $8, X7, X7
	VPMOVSXBD    X7, Y1
	VPMOVSXBD    X6, Y2
	VPSRLDQ      $8, X6, X6
	VPMOVSXBD    X6, Y3
	VCVTDQ2PS    Y0, Y0
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VMULPS       Y8, Y0, Y0
	VMULPS       Y8, Y1, Y1
	VMULPS       Y8, Y2, Y2
	VMULPS       Y8, Y3, Y3
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y1, 32(DI)
	VMOVUPS      Y2, 64(DI)
	VMOVUPS      Y3, 96(DI)
	ADDQ         $18, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          dq4_loop

dq4_done:
	VZEROUPPER
	RET

// func dotQ8I16AVX2(nb int, w *byte, x *int16, dx *float32, lut *float32) float32
//
// The dot product of nb Q8_0 blocks with activations quantized to int16
// per block of 32 (x, scales dx): per block the weights are widened to
// int16, multiplied and summed in pairs to int32 (VPMADDWD: at most
// 2·127·32767 per pair, 32·127·32767 per block: no overflow), converted
// once, and scaled by the weight's and the activation's scales.
TEXT ·dotQ8I16AVX2(SB), NOSPLIT, $0-44
	MOVQ   nb+0(FP), CX
	MOVQ   w+8(FP), SI
	MOVQ   x+16(FP), DI
	MOVQ   dx+24(FP), R9
	MOVQ   lut+32(FP), R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	TESTQ  CX, CX
	JZ     q8i_reduce

q8i_loop:
	MOVWLZX      (SI), AX
	VMOVSS       (R8)(AX*4), X8
	VMULSS       (R9), X8, X8
	VBROADCASTSS X8, Y8
	VPMOVSXBW    2(SI), Y0
	VPMOVSXBW    18(SI), Y1
	VPMADDWD     (DI), Y0, Y0
	VPMADDWD     32(DI), Y1, Y1
	VPADDD       Y1, Y0, Y0
	VCVTDQ2PS    Y0, Y0
	VFMADD231PS  Y0, Y8, Y4
	ADDQ         $34, SI
	ADDQ         $64, DI
	ADDQ         $4, R9
	DECQ         CX
	JNZ          q8i_loop

q8i_reduce:
	VADDPS       Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS       X5, X4, X4
	VHADDPS      X4, X4, X4
	VHADDPS      X4, X4, X4
	VZEROUPPER
	MOVSS        X4, ret+40(FP)
	RET

// func dotQ4I16AVX2(nb int, w *byte, x *int16, dx *float32, lut *float32) float32
//
// dotQ8I16AVX2 for Q4_0 blocks: the nibbles, less 8, widened to int16.
TEXT ·dotQ4I16AVX2(SB), NOSPLIT, $0-44
	MOVQ    nb+0(FP), CX
	MOVQ    w+8(FP), SI
	MOVQ    x+16(FP), DI
	MOVQ    dx+24(FP), R9
	MOVQ    lut+32(FP), R8
	VXORPS  Y4, Y4, Y4
	VMOVDQU q4mask<>(SB), X9
	VMOVDQU q4eight<>(SB), X10
	TESTQ   CX, CX
	JZ      q4i_reduce

q4i_loop:
	MOVWLZX      (SI), AX
	VMOVSS       (R8)(AX*4), X8
	VMULSS       (R9), X8, X8
	VBROADCASTSS X8, Y8
	VMOVDQU      2(SI), X6
	VPAND        X9, X6, X7
	VPSRLW       $4, X6, X6
	VPAND        X9, X6, X6
	VPSUBB       X10, X7, X7
	VPSUBB       X10, X6, X6
	VPMOVSXBW    X7, Y0
	VPMOVSXBW    X6, Y1
	VPMADDWD     (DI), Y0, Y0
	VPMADDWD     32(DI), Y1, Y1
	VPADDD       Y1, Y0, Y0
	VCVTDQ2PS    Y0, Y0
	VFMADD231PS  Y0, Y8, Y4
	ADDQ         $18, SI
	ADDQ         $64, DI
	ADDQ         $4, R9
	DECQ         CX
	JNZ          q4i_loop

q4i_reduce:
	VEXTRACTF128 $1, Y4, X5
	VADDPS       X5, X4, X4
	VHADDPS      X4, X4, X4
	VHADDPS      X4, X4, X4
	VZEROUPPER
	MOVSS        X4, ret+40(FP)
	RET
