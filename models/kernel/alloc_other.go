//go:build !linux

package kernel

import "errors"

// thpSetting has no counterpart off Linux: weights stay on the Go heap.
const thpSetting = ""

func thpAllowed(string) bool { return false }

func mapHuge(int) (*Weights, error) { return nil, errors.New("huge pages: Linux only") }

func unmap([]byte) {}
