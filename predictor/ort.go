package predictor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ORTVersion is the ONNX Runtime release that scripts/fetch_ort.sh fetches
// (from the npm package onnxruntime-node) and that onnxruntime_go v1.27.0 is
// built against (it needs ORT ≥ 1.24).
const ORTVersion = "1.24.3"

// ErrORTMissing is wrapped by the error of InitORT (and of loading a model)
// when the ONNX Runtime shared library is not where ORTLibraryPath says.
// Callers should then fall back to history-based estimates (HistoryPredictor)
// or to the Go forward pass (GoClassifier).
var ErrORTMissing = errors.New("onnx runtime library not found")

// ORTLibraryPath is where the ONNX Runtime shared library is loaded from:
// $PITSTOP_ORT_LIB if set, else $PITSTOP_CACHE/ort/<ORTVersion>/libonnxruntime.so.1
// with PITSTOP_CACHE defaulting to $HOME/.cache/pitstop — the path
// scripts/fetch_ort.sh writes and prints.
func ORTLibraryPath() string {
	if p := os.Getenv("PITSTOP_ORT_LIB"); p != "" {
		return p
	}
	cache := os.Getenv("PITSTOP_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		cache = filepath.Join(home, ".cache", "pitstop")
	}
	return filepath.Join(cache, "ort", ORTVersion, "libonnxruntime.so.1")
}

var ortState struct {
	sync.Mutex
	ready bool
}

// InitORT loads the ONNX Runtime library from ORTLibraryPath and initialises
// its environment, once per process; later calls return nil. A missing
// library gives an error wrapping ErrORTMissing that says how to get it.
func InitORT() error {
	ortState.Lock()
	defer ortState.Unlock()
	if ortState.ready {
		return nil
	}
	if ort.IsInitialized() { // initialised by someone else in this process
		ortState.ready = true
		return nil
	}
	path := ORTLibraryPath()
	if err := checkORTLibrary(path); err != nil {
		return err
	}
	ort.SetSharedLibraryPath(path)
	// Runtime errors come back to callers as errors; the runtime's own log
	// would only repeat them on stderr.
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		return fmt.Errorf("onnx runtime at %s: %w", path, err)
	}
	_ = ort.DisableTelemetry()
	ortState.ready = true
	return nil
}

// checkORTLibrary says whether a library file is at path.
func checkORTLibrary(path string) error {
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return fmt.Errorf("%w at %s: run scripts/fetch_ort.sh or set PITSTOP_ORT_LIB", ErrORTMissing, path)
	}
	return nil
}
