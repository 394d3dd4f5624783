//go:build race

package api

// raceEnabled: the tests run under the race detector.
const raceEnabled = true
