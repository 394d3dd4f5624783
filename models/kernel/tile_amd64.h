// The register tile of the 6-row kernels, shared by the packed
// micro-kernels (kernels_amd64.s) and the unpacked ones (direct_amd64.s):
// two vectors of C per row, rows 0-5 in registers 0-11 (Y: AVX2, Z:
// AVX-512), the two vectors of B at the current depth in 12 and 13, the
// broadcasts of A in 14 and 15. DX points at C's tile, R10 holds C's row
// stride in bytes.

// ZERO_TILE_Y clears the accumulators.
#define ZERO_TILE_Y \
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

// FMA_TILE_Y adds B's two vectors times a0..a5 (the six rows' elements of
// A at this depth, as memory operands) to the accumulators.
#define FMA_TILE_Y(a0, a1, a2, a3, a4, a5) \
	VBROADCASTSS a0, Y14; \
	VFMADD231PS  Y12, Y14, Y0; \
	VFMADD231PS  Y13, Y14, Y1; \
	VBROADCASTSS a1, Y15; \
	VFMADD231PS  Y12, Y15, Y2; \
	VFMADD231PS  Y13, Y15, Y3; \
	VBROADCASTSS a2, Y14; \
	VFMADD231PS  Y12, Y14, Y4; \
	VFMADD231PS  Y13, Y14, Y5; \
	VBROADCASTSS a3, Y15; \
	VFMADD231PS  Y12, Y15, Y6; \
	VFMADD231PS  Y13, Y15, Y7; \
	VBROADCASTSS a4, Y14; \
	VFMADD231PS  Y12, Y14, Y8; \
	VFMADD231PS  Y13, Y14, Y9; \
	VBROADCASTSS a5, Y15; \
	VFMADD231PS  Y12, Y15, Y10; \
	VFMADD231PS  Y13, Y15, Y11

// STORE_TILE_Y adds the accumulators to C.
#define STORE_TILE_Y \
	VADDPS  (DX), Y0, Y0; \
	VMOVUPS Y0, (DX); \
	VADDPS  32(DX), Y1, Y1; \
	VMOVUPS Y1, 32(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Y2, Y2; \
	VMOVUPS Y2, (DX); \
	VADDPS  32(DX), Y3, Y3; \
	VMOVUPS Y3, 32(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Y4, Y4; \
	VMOVUPS Y4, (DX); \
	VADDPS  32(DX), Y5, Y5; \
	VMOVUPS Y5, 32(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Y6, Y6; \
	VMOVUPS Y6, (DX); \
	VADDPS  32(DX), Y7, Y7; \
	VMOVUPS Y7, 32(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Y8, Y8; \
	VMOVUPS Y8, (DX); \
	VADDPS  32(DX), Y9, Y9; \
	VMOVUPS Y9, 32(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Y10, Y10; \
	VMOVUPS Y10, (DX); \
	VADDPS  32(DX), Y11, Y11; \
	VMOVUPS Y11, 32(DX)

// ZERO_TILE_Z clears the accumulators.
#define ZERO_TILE_Z \
	VXORPS Z0, Z0, Z0; \
	VXORPS Z1, Z1, Z1; \
	VXORPS Z2, Z2, Z2; \
	VXORPS Z3, Z3, Z3; \
	VXORPS Z4, Z4, Z4; \
	VXORPS Z5, Z5, Z5; \
	VXORPS Z6, Z6, Z6; \
	VXORPS Z7, Z7, Z7; \
	VXORPS Z8, Z8, Z8; \
	VXORPS Z9, Z9, Z9; \
	VXORPS Z10, Z10, Z10; \
	VXORPS Z11, Z11, Z11

// FMA_TILE_Z adds B's two vectors times a0..a5 (the six rows' elements of
// A at this depth, as memory operands) to the accumulators.
#define FMA_TILE_Z(a0, a1, a2, a3, a4, a5) \
	VBROADCASTSS a0, Z14; \
	VFMADD231PS  Z12, Z14, Z0; \
	VFMADD231PS  Z13, Z14, Z1; \
	VBROADCASTSS a1, Z15; \
	VFMADD231PS  Z12, Z15, Z2; \
	VFMADD231PS  Z13, Z15, Z3; \
	VBROADCASTSS a2, Z14; \
	VFMADD231PS  Z12, Z14, Z4; \
	VFMADD231PS  Z13, Z14, Z5; \
	VBROADCASTSS a3, Z15; \
	VFMADD231PS  Z12, Z15, Z6; \
	VFMADD231PS  Z13, Z15, Z7; \
	VBROADCASTSS a4, Z14; \
	VFMADD231PS  Z12, Z14, Z8; \
	VFMADD231PS  Z13, Z14, Z9; \
	VBROADCASTSS a5, Z15; \
	VFMADD231PS  Z12, Z15, Z10; \
	VFMADD231PS  Z13, Z15, Z11

// STORE_TILE_Z adds the accumulators to C.
#define STORE_TILE_Z \
	VADDPS  (DX), Z0, Z0; \
	VMOVUPS Z0, (DX); \
	VADDPS  64(DX), Z1, Z1; \
	VMOVUPS Z1, 64(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Z2, Z2; \
	VMOVUPS Z2, (DX); \
	VADDPS  64(DX), Z3, Z3; \
	VMOVUPS Z3, 64(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Z4, Z4; \
	VMOVUPS Z4, (DX); \
	VADDPS  64(DX), Z5, Z5; \
	VMOVUPS Z5, 64(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Z6, Z6; \
	VMOVUPS Z6, (DX); \
	VADDPS  64(DX), Z7, Z7; \
	VMOVUPS Z7, 64(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Z8, Z8; \
	VMOVUPS Z8, (DX); \
	VADDPS  64(DX), Z9, Z9; \
	VMOVUPS Z9, 64(DX); \
	ADDQ    R10, DX; \
	VADDPS  (DX), Z10, Z10; \
	VMOVUPS Z10, (DX); \
	VADDPS  64(DX), Z11, Z11; \
	VMOVUPS Z11, 64(DX)

// MICRO_ARGS loads a packed micro-kernel's arguments (kc, a, b, c, ldc):
// CX the depth, SI packed A, DI packed B.
#define MICRO_ARGS \
	MOVQ kc+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ b+16(FP), DI; \
	MOVQ c+24(FP), DX; \
	MOVQ ldc+32(FP), R10; \
	SHLQ $2, R10

// DIRECT_ARGS loads an unpacked tile kernel's arguments (k, a, lda, b,
// ldb, c, ldc): CX the depth, SI row 0 of A and R11 its row 3, R8 A's row
// stride in bytes, DI B, R9 B's row stride in bytes.
#define DIRECT_ARGS \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ lda+16(FP), R8; \
	MOVQ b+24(FP), DI; \
	MOVQ ldb+32(FP), R9; \
	MOVQ c+40(FP), DX; \
	MOVQ ldc+48(FP), R10; \
	SHLQ $2, R8; \
	SHLQ $2, R9; \
	SHLQ $2, R10; \
	LEAQ (SI)(R8*2), R11; \
	ADDQ R8, R11
