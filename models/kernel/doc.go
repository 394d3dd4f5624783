// Package kernel is pitstop's one home for dense float32 matrix products on
// the CPU: the general product (Gemm), the decode-sized products that stream
// a weight matrix once, and the short dot products and updates of row-by-row
// attention (Dot, Axpy). Serving (models/cpu's forward pass) and training
// (training/tinytools) both call it; quantized kernels belong here too.
//
// Why by hand: gonum's pure-Go BLAS reaches about 24 GFLOP/s on a
// prefill-sized product on the 2-core development machine, and OpenBLAS
// needs cgo, a system library and a build tag. This package is Go and Go
// assembly only and picks its code at run time from the CPU's features
// (golang.org/x/sys/cpu): AVX-512F, else AVX2 with FMA, else portable Go.
// No build tag, no cgo.
//
// How, by the shape of the product:
//
//   - few rows (at most 8) against a matrix stored [n×k] (activations times
//     HF-layout weights: a decode step): each weight row is read once for
//     all the rows, in order for one row; two to eight rows take the weight
//     in blocks, three rows at a time against A packed to stay in L1, each
//     worker prefetching its next block and the next three rows (one row
//     reads the weights at 0.75-0.95 of the memory's read speed per
//     CPU-second on the development machine; eight rows at about 0.6 of it
//     on 4 KiB pages, and on 2 MiB pages, where eight rows are bound by the
//     FMA units rather than the memory, at 0.7 of that compute roof;
//     docs/results-structure.md; gemv.go, gemv_amd64.s);
//   - both operands as stored, alpha 1, and a B that fits in L2 (the tiny
//     model's training products): register tiles straight from A and B,
//     without packing, which would cost as much as the product (direct.go);
//   - the rest: a blocked, packed GEMM (the BLIS scheme): A is packed once
//     into panels of MR rows (alpha folded in), then blocks of C are shared
//     out, each packing its block of B into panels of NR columns, KC deep,
//     and running an MR×NR register-tiled micro-kernel over them (gemm.go).
//
// Products share their blocks out to at most Workers goroutines.
//
// Decode reads the weights from memory every step, and reads them faster
// from 2 MiB pages than from the Go heap's 4 KiB ones: AllocWeights is
// where loaders put weight matrices (alloc.go, alloc_linux.go).
//
// Every element of C is summed in the same order whatever the number of
// workers, so results do not depend on Workers (they do depend on the
// instruction set and on whether the product took the GEMM or the decode
// path).
package kernel
