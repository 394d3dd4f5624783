#include "textflag.h"

// Quantized rows (quant.go): blocks of 32 weights, a float16 scale first,
// the scale read through lut (float16 bits -> float32, 65536 entries).

DATA q4mask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4mask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q4mask<>(SB), RODATA|NOPTR, $16

DATA q4eight<>+0(SB)/8, $0x0808080808080808
DATA q4eight<>+8(SB)/8, $0x0808080808080808
GLOBL q4eight<>(SB), RODATA|NOPTR, $16

// func dotQ8AVX2(nb int, w *byte, x *float32, lut *float32) float32
//
// The dot product of nb Q8_0 blocks (34 bytes each) with 32·nb floats:
// per block, the int8 weights times x, the block's sum times its scale.
TEXT ·dotQ8AVX2(SB), NOSPLIT, $0-36
	MOVQ   nb+0(FP), CX
	MOVQ   w+8(FP), SI
	MOVQ   x+16(FP), DI
	MOVQ   lut+24(FP), R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	TESTQ  CX, CX
	JZ     q8_reduce

q8_loop:
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
	VMULPS       (DI), Y0, Y0
	VFMADD231PS  32(DI), Y1, Y0
	VMULPS       64(DI), Y2, Y2
	VFMADD231PS  96(DI), Y3, Y2
	VFMADD231PS  Y0, Y8, Y4
	VFMADD231PS  Y2, Y8, Y5
	ADDQ         $34, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          q8_loop

q8_reduce:
	VADDPS       Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS       X5, X4, X4
	VHADDPS      X4, X4, X4
	VHADDPS      X4, X4, X4
	VZEROUPPER
	MOVSS        X4, ret+32(FP)
	RET

// func dotQ4AVX2(nb int, w *byte, x *float32, lut *float32) float32
//
// The dot product of nb Q4_0 blocks (18 bytes: scale, then 16 bytes whose
// low nibbles are weights 0-15 and high nibbles 16-31, each minus 8).
TEXT ·dotQ4AVX2(SB), NOSPLIT, $0-36
	MOVQ   nb+0(FP), CX
	MOVQ   w+8(FP), SI
	MOVQ   x+16(FP), DI
	MOVQ   lut+24(FP), R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VMOVDQU q4mask<>(SB), X9
	VMOVDQU q4eight<>(SB), X10
	TESTQ  CX, CX
	JZ     q4_reduce

q4_loop:
	MOVWLZX      (SI), AX
	VBROADCASTSS (R8)(AX*4), Y8
	VMOVDQU      2(SI), X6
	VPAND        X9, X6, X7      // low nibbles: weights 0-15
	VPSRLW       $4, X6, X6
	VPAND        X9, X6, X6      // high nibbles: weights 16-31
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
	VMULPS       (DI), Y0, Y0
	VFMADD231PS  32(DI), Y1, Y0
	VMULPS       64(DI), Y2, Y2
	VFMADD231PS  96(DI), Y3, Y2
	VFMADD231PS  Y0, Y8, Y4
	VFMADD231PS  Y2, Y8, Y5
	ADDQ         $18, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          q4_loop

q4_reduce:
	VADDPS       Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS       X5, X4, X4
	VHADDPS      X4, X4, X4
	VHADDPS      X4, X4, X4
	VZEROUPPER
	MOVSS        X4, ret+32(FP)
	RET

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

// func dotQ8AVX512(nb int, w *byte, x *float32, lut *float32) float32
//
// dotQ8AVX2 with 16 lanes: two blocks per iteration, one accumulator each.
TEXT ·dotQ8AVX512(SB), NOSPLIT, $0-36
	MOVQ   nb+0(FP), CX
	MOVQ   w+8(FP), SI
	MOVQ   x+16(FP), DI
	MOVQ   lut+24(FP), R8
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5

q8z_loop2:
	CMPQ         CX, $2
	JB           q8z_tail
	MOVWLZX      (SI), AX
	MOVWLZX      34(SI), DX
	VBROADCASTSS (R8)(AX*4), Z8
	VBROADCASTSS (R8)(DX*4), Z9
	VPMOVSXBD    2(SI), Z0
	VPMOVSXBD    18(SI), Z1
	VPMOVSXBD    36(SI), Z2
	VPMOVSXBD    52(SI), Z3
	VCVTDQ2PS    Z0, Z0
	VCVTDQ2PS    Z1, Z1
	VCVTDQ2PS    Z2, Z2
	VCVTDQ2PS    Z3, Z3
	VMULPS       (DI), Z0, Z0
	VFMADD231PS  64(DI), Z1, Z0
	VMULPS       128(DI), Z2, Z2
	VFMADD231PS  192(DI), Z3, Z2
	VFMADD231PS  Z0, Z8, Z4
	VFMADD231PS  Z2, Z9, Z5
	ADDQ         $68, SI
	ADDQ         $256, DI
	SUBQ         $2, CX
	JMP          q8z_loop2

q8z_tail:
	TESTQ        CX, CX
	JZ           q8z_reduce
	MOVWLZX      (SI), AX
	VBROADCASTSS (R8)(AX*4), Z8
	VPMOVSXBD    2(SI), Z0
	VPMOVSXBD    18(SI), Z1
	VCVTDQ2PS    Z0, Z0
	VCVTDQ2PS    Z1, Z1
	VMULPS       (DI), Z0, Z0
	VFMADD231PS  64(DI), Z1, Z0
	VFMADD231PS  Z0, Z8, Z4

q8z_reduce:
	VADDPS        Z5, Z4, Z4
	VEXTRACTF32X8 $1, Z4, Y5
	VADDPS        Y5, Y4, Y4
	VEXTRACTF128  $1, Y4, X5
	VADDPS        X5, X4, X4
	VHADDPS       X4, X4, X4
	VHADDPS       X4, X4, X4
	VZEROUPPER
	MOVSS         X4, ret+32(FP)
	RET

// func dotQ4AVX512(nb int, w *byte, x *float32, lut *float32) float32
//
// dotQ4AVX2 with 16 lanes: the 16 low nibbles are weights 0-15, the high
// ones 16-31, each sign-extended to 16 int32 at once.
TEXT ·dotQ4AVX512(SB), NOSPLIT, $0-36
	MOVQ    nb+0(FP), CX
	MOVQ    w+8(FP), SI
	MOVQ    x+16(FP), DI
	MOVQ    lut+24(FP), R8
	VXORPS  Z4, Z4, Z4
	VXORPS  Z5, Z5, Z5
	VMOVDQU q4mask<>(SB), X9
	VMOVDQU q4eight<>(SB), X10

q4z_loop2:
	CMPQ         CX, $2
	JB           q4z_tail
	MOVWLZX      (SI), AX
	MOVWLZX      18(SI), DX
	VBROADCASTSS (R8)(AX*4), Z8
	VBROADCASTSS (R8)(DX*4), Z11
	VMOVDQU      2(SI), X6
	VMOVDQU      20(SI), X12
	VPAND        X9, X6, X7
	VPSRLW       $4, X6, X6
	VPAND        X9, X6, X6
	VPAND        X9, X12, X13
	VPSRLW       $4, X12, X12
	VPAND        X9, X12, X12
	VPSUBB       X10, X7, X7
	VPSUBB       X10, X6, X6
	VPSUBB       X10, X13, X13
	VPSUBB       X10, X12, X12
	VPMOVSXBD    X7, Z0
	VPMOVSXBD    X6, Z1
	VPMOVSXBD    X13, Z2
	VPMOVSXBD    X12, Z3
	VCVTDQ2PS    Z0, Z0
	VCVTDQ2PS    Z1, Z1
	VCVTDQ2PS    Z2, Z2
	VCVTDQ2PS    Z3, Z3
	VMULPS       (DI), Z0, Z0
	VFMADD231PS  64(DI), Z1, Z0
	VMULPS       128(DI), Z2, Z2
	VFMADD231PS  192(DI), Z3, Z2
	VFMADD231PS  Z0, Z8, Z4
	VFMADD231PS  Z2, Z11, Z5
	ADDQ         $36, SI
	ADDQ         $256, DI
	SUBQ         $2, CX
	JMP          q4z_loop2

q4z_tail:
	TESTQ        CX, CX
	JZ           q4z_reduce
	MOVWLZX      (SI), AX
	VBROADCASTSS (R8)(AX*4), Z8
	VMOVDQU      2(SI), X6
	VPAND        X9, X6, X7
	VPSRLW       $4, X6, X6
	VPAND        X9, X6, X6
	VPSUBB       X10, X7, X7
	VPSUBB       X10, X6, X6
	VPMOVSXBD    X7, Z0
	VPMOVSXBD    X6, Z1
	VCVTDQ2PS    Z0, Z0
	VCVTDQ2PS    Z1, Z1
	VMULPS       (DI), Z0, Z0
	VFMADD231PS  64(DI), Z1, Z0
	VFMADD231PS  Z0, Z8, Z4

q4z_reduce:
	VADDPS        Z5, Z4, Z4
	VEXTRACTF32X8 $1, Z4, Y5
	VADDPS        Y5, Y4, Y4
	VEXTRACTF128  $1, Y4, X5
	VADDPS        X5, X4, X4
	VHADDPS       X4, X4, X4
	VHADDPS       X4, X4, X4
	VZEROUPPER
	MOVSS         X4, ret+32(FP)
	RET
