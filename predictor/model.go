package predictor

import (
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// LengthPredictor predicts the pre-tool output length of a call segment: the
// number of tokens the model generates before its next tool call (or its end).
// tokens < 0 means no prediction. probs, when not nil, holds the NumClasses
// class probabilities.
type LengthPredictor interface {
	PredictLength(in Input) (tokens int, probs []float32)
}

// MaxBatch is the largest batch one ONNX Runtime run gets; PredictBatch splits
// longer inputs.
const MaxBatch = 256

// Model is a length classifier run by ONNX Runtime. It is safe for concurrent
// use; Close releases it.
type Model struct {
	info *ModelInfo
	sess *ort.DynamicAdvancedSession

	mu      sync.Mutex
	free    []*ortRunner
	all     []*ortRunner
	closed  bool
	warnErr sync.Once
}

// ortRunner holds one goroutine's buffers and its batch-1 tensors.
type ortRunner struct {
	in, out     []float32
	in1, out1   *ort.Tensor[float32]
	vals1, outs []ort.Value
}

//go:embed data/default.onnx
var defaultModel []byte

// DefaultModelBytes is the ONNX file of the default model (predictor/data/default.onnx).
func DefaultModelBytes() []byte { return defaultModel }

// LoadDefault loads the default model (trained on the converted InferCept and
// BFCL traces; see predictor/data/README.md) into ONNX Runtime.
func LoadDefault() (*Model, error) { return LoadModelBytes(defaultModel) }

// LoadModel reads an ONNX length model from path and opens it in ONNX Runtime.
func LoadModel(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m, err := LoadModelBytes(data)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	return m, nil
}

// LoadModelBytes checks data against the length-model contract (ParseONNX)
// and opens it in ONNX Runtime (InitORT).
func LoadModelBytes(data []byte) (*Model, error) {
	info, err := ParseONNX(data)
	if err != nil {
		return nil, err
	}
	if err := InitORT(); err != nil {
		return nil, err
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnx runtime session options: %w", err)
	}
	defer opts.Destroy()
	// A small MLP gains nothing from intra-op threads; one thread per run keeps
	// latency low and leaves the cores to the engine.
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("onnx runtime session options: %w", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("onnx runtime session options: %w", err)
	}
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(data, []string{InputName}, []string{OutputName}, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: onnx runtime refused the model: %v", ErrNotLengthModel, err)
	}
	m := &Model{info: info, sess: sess}
	// Some faults (weights that do not fit each other) only show when the
	// graph runs: run it once on zero features so that they fail the load.
	r, err := m.getRunner()
	if err == nil {
		err = m.sess.Run(r.vals1, r.outs)
		m.putRunner(r)
	}
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("%w: onnx runtime refused the model: %v", ErrNotLengthModel, err)
	}
	return m, nil
}

// Info is what the model's ONNX file says of it.
func (m *Model) Info() *ModelInfo { return m.info }

// OverflowTokens is the prediction for the overflow bin.
func (m *Model) OverflowTokens() int { return m.info.OverflowTokens }

// Close releases the ONNX Runtime session. The model must not be used after.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	for _, r := range m.all {
		r.in1.Destroy()
		r.out1.Destroy()
	}
	m.all, m.free = nil, nil
	return m.sess.Destroy()
}

var errClosed = errors.New("predictor: model is closed")

func (m *Model) getRunner() (*ortRunner, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	if n := len(m.free); n > 0 {
		r := m.free[n-1]
		m.free = m.free[:n-1]
		return r, nil
	}
	r := &ortRunner{in: make([]float32, FeatureDim), out: make([]float32, NumClasses)}
	var err error
	if r.in1, err = ort.NewTensor(ort.NewShape(1, FeatureDim), r.in); err != nil {
		return nil, fmt.Errorf("onnx runtime tensor: %w", err)
	}
	if r.out1, err = ort.NewTensor(ort.NewShape(1, NumClasses), r.out); err != nil {
		r.in1.Destroy()
		return nil, fmt.Errorf("onnx runtime tensor: %w", err)
	}
	r.vals1 = []ort.Value{r.in1}
	r.outs = []ort.Value{r.out1}
	m.all = append(m.all, r)
	return r, nil
}

func (m *Model) putRunner(r *ortRunner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.free = append(m.free, r)
	}
}

// PredictLength featurizes in, runs the model and returns the median of the
// predicted length distribution (LengthQuantile 0.5: the point prediction
// with the least expected absolute error) with the class probabilities.
// If ONNX Runtime fails (which a model that loaded should not), it logs once
// and falls back to the Go forward pass when the graph allows it, else
// returns -1.
func (m *Model) PredictLength(in Input) (int, []float32) {
	probs := make([]float32, NumClasses)
	r, err := m.getRunner()
	if err == nil {
		Featurize(in, r.in)
		err = m.sess.Run(r.vals1, r.outs)
		if err == nil {
			Softmax(r.out[:NumClasses], probs)
		}
		m.putRunner(r)
	}
	if err != nil {
		m.warnErr.Do(func() { slog.Warn("predictor: onnx runtime run failed; using the Go forward pass", "err", err) })
		if m.info.MLP == nil {
			return -1, nil
		}
		g := GoClassifier{MLP: m.info.MLP, OverflowTokens: m.info.OverflowTokens}
		return g.PredictLength(in)
	}
	return LengthQuantile(probs, 0.5, m.info.OverflowTokens), probs
}

// PredictBatch predicts the lengths of ins into tokens (len(tokens) ≥ len(ins)).
func (m *Model) PredictBatch(ins []Input, tokens []int) error {
	if len(tokens) < len(ins) {
		return fmt.Errorf("predict batch: %d inputs but room for %d results", len(ins), len(tokens))
	}
	return m.batches(ins, func(start int, logits []float32) {
		for i := 0; i < len(logits); i += NumClasses {
			row := logits[i : i+NumClasses]
			Softmax(row, row)
			tokens[start+i/NumClasses] = LengthQuantile(row, 0.5, m.info.OverflowTokens)
		}
	})
}

// LogitsBatch runs the model on ins and writes len(ins)×NumClasses logits,
// row-major, into logits.
func (m *Model) LogitsBatch(ins []Input, logits []float32) error {
	if len(logits) < len(ins)*NumClasses {
		return fmt.Errorf("logits batch: need %d floats for %d inputs, have %d", len(ins)*NumClasses, len(ins), len(logits))
	}
	return m.batches(ins, func(start int, out []float32) { copy(logits[start*NumClasses:], out) })
}

// batches runs the model on ins, MaxBatch inputs at a time, and hands use
// each batch's logits (a row of NumClasses per input, row-major, in the
// runner's buffer: use may overwrite them) with the index of its first
// input.
func (m *Model) batches(ins []Input, use func(start int, logits []float32)) error {
	r, err := m.getRunner()
	if err != nil {
		return err
	}
	defer m.putRunner(r)
	for start := 0; start < len(ins); start += MaxBatch {
		chunk := ins[start:min(start+MaxBatch, len(ins))]
		if err := m.logits(r, len(chunk), func(x []float32) { featurizeAll(chunk, x) }); err != nil {
			return err
		}
		use(start, r.out[:len(chunk)*NumClasses])
	}
	return nil
}

// LogitsFeatures runs the model on n feature vectors (n×FeatureDim floats,
// row-major) and writes n×NumClasses logits.
func (m *Model) LogitsFeatures(features []float32, n int, logits []float32) error {
	if len(features) < n*FeatureDim || len(logits) < n*NumClasses {
		return fmt.Errorf("logits: %d rows need %d features and %d logits, have %d and %d",
			n, n*FeatureDim, n*NumClasses, len(features), len(logits))
	}
	r, err := m.getRunner()
	if err != nil {
		return err
	}
	defer m.putRunner(r)
	for start := 0; start < n; start += MaxBatch {
		k := min(MaxBatch, n-start)
		if err := m.logits(r, k, func(x []float32) {
			copy(x, features[start*FeatureDim:(start+k)*FeatureDim])
		}); err != nil {
			return err
		}
		copy(logits[start*NumClasses:], r.out[:k*NumClasses])
	}
	return nil
}

func featurizeAll(ins []Input, x []float32) {
	for i := range ins {
		Featurize(ins[i], x[i*FeatureDim:(i+1)*FeatureDim])
	}
}

// logits fills r.in for n rows with fill and runs the model; the logits land
// in r.out.
func (m *Model) logits(r *ortRunner, n int, fill func(x []float32)) error {
	if n == 0 {
		return nil
	}
	if n == 1 {
		fill(r.in[:FeatureDim])
		return m.sess.Run(r.vals1, r.outs)
	}
	if cap(r.in) < n*FeatureDim {
		// Grow; the batch-1 tensors keep pointing at the old buffers.
		r.in = make([]float32, n*FeatureDim)
		r.out = make([]float32, n*NumClasses)
		r.in1.Destroy()
		r.out1.Destroy()
		var err error
		if r.in1, err = ort.NewTensor(ort.NewShape(1, FeatureDim), r.in); err != nil {
			return err
		}
		if r.out1, err = ort.NewTensor(ort.NewShape(1, NumClasses), r.out); err != nil {
			return err
		}
		r.vals1[0], r.outs[0] = r.in1, r.out1
	}
	x := r.in[:n*FeatureDim]
	fill(x)
	in, err := ort.NewTensor(ort.NewShape(int64(n), FeatureDim), x)
	if err != nil {
		return fmt.Errorf("onnx runtime tensor: %w", err)
	}
	defer in.Destroy()
	out, err := ort.NewTensor(ort.NewShape(int64(n), NumClasses), r.out[:n*NumClasses])
	if err != nil {
		return fmt.Errorf("onnx runtime tensor: %w", err)
	}
	defer out.Destroy()
	if err := m.sess.Run([]ort.Value{in}, []ort.Value{out}); err != nil {
		return fmt.Errorf("onnx runtime: %w", err)
	}
	return nil
}

// GoClassifier runs an MLP with the Go forward pass: the same predictions as
// the ONNX model it was read from (ParseONNX), without ONNX Runtime.
type GoClassifier struct {
	MLP            *MLP
	OverflowTokens int
}

// PredictLength implements LengthPredictor.
func (g GoClassifier) PredictLength(in Input) (int, []float32) {
	x := make([]float32, FeatureDim)
	hidden := make([]float32, g.MLP.Hidden)
	probs := make([]float32, g.MLP.Out)
	Featurize(in, x)
	g.MLP.Forward(x, hidden, probs)
	Softmax(probs, probs)
	return LengthQuantile(probs, 0.5, g.OverflowTokens), probs
}

// HistoryPredictor is the fallback without a model: the program's mean
// pre-tool output length so far, or Default for a program's first segment.
type HistoryPredictor struct{ Default int }

// PredictLength implements LengthPredictor; probs is nil.
func (h HistoryPredictor) PredictLength(in Input) (int, []float32) {
	if in.History.Calls > 0 {
		return int(math.Round(in.History.MeanOutputTokens)), nil
	}
	return h.Default, nil
}
