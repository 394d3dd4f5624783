//go:build !cgo

package tools

// cgoResolver: the test binary can use the C library's resolver
// (GODEBUG=netdns=cgo).
const cgoResolver = false
