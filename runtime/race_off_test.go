//go:build !race

package runtime

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
