package predictor

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/pitstop-llm/pitstop/predictor/onnxpb"
)

// The key test: a model trained in Go, exported to ONNX and run by ONNX
// Runtime gives the Go forward pass's logits, at batch 1 and batched.
func TestONNXRuntimeMatchesGoForward(t *testing.T) {
	mlp, over, data := toyModel(t)
	requireORT(t)
	m, err := LoadModelBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.OverflowTokens() != over {
		t.Fatalf("overflow tokens %d, want %d", m.OverflowTokens(), over)
	}
	if m.Info().MLP == nil {
		t.Fatal("ParseONNX did not recover the MLP's weights")
	}

	recs := toyRecords(70, 99)
	ins := make([]Input, len(recs))
	for i := range recs {
		ins[i] = recs[i].Input
	}
	got := make([]float32, len(ins)*NumClasses)
	if err := m.LogitsBatch(ins, got); err != nil {
		t.Fatal(err)
	}
	x := make([]float32, FeatureDim)
	hidden := make([]float32, mlp.Hidden)
	want := make([]float32, NumClasses)
	tokens := make([]int, len(ins))
	if err := m.PredictBatch(ins, tokens); err != nil {
		t.Fatal(err)
	}
	var maxDiff float64
	for i, in := range ins {
		Featurize(in, x)
		mlp.Forward(x, hidden, want)
		for k := range want {
			maxDiff = max(maxDiff, math.Abs(float64(got[i*NumClasses+k]-want[k])))
		}
		wantProbs := make([]float32, NumClasses)
		Softmax(want, wantProbs)
		wantTokens := LengthQuantile(wantProbs, 0.5, over)
		one, probs := m.PredictLength(in)
		if one != wantTokens || tokens[i] != wantTokens {
			t.Errorf("input %d: ONNX predicts %d (batch %d), Go %d", i, one, tokens[i], wantTokens)
		}
		var sum float64
		for _, p := range probs {
			sum += float64(p)
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Errorf("input %d: probabilities sum to %v", i, sum)
		}
		// The Go-only classifier read back from the ONNX file agrees too.
		if g, _ := (GoClassifier{MLP: m.Info().MLP, OverflowTokens: over}).PredictLength(in); g != wantTokens {
			t.Errorf("input %d: GoClassifier from ONNX predicts %d, want %d", i, g, wantTokens)
		}
	}
	if maxDiff > 1e-4 {
		t.Fatalf("ONNX Runtime logits differ from the Go forward pass by %g (> 1e-4)", maxDiff)
	}
	t.Logf("max |logit difference| over %d inputs: %.2g", len(ins), maxDiff)

	// The graph's own ArgMax output agrees with Go's argmax.
	feats := make([]float32, len(ins)*FeatureDim)
	featurizeAll(ins, feats)
	logits := make([]float32, len(ins)*NumClasses)
	if err := m.LogitsFeatures(feats, len(ins), logits); err != nil {
		t.Fatal(err)
	}
	for i := range ins {
		for k := range NumClasses {
			if logits[i*NumClasses+k] != got[i*NumClasses+k] {
				t.Fatalf("LogitsFeatures and LogitsBatch differ at %d,%d", i, k)
			}
		}
	}
}

// loadToyModel is toyModel's ONNX file loaded in ONNX Runtime (the test
// skips without it).
func loadToyModel(t *testing.T) *Model {
	t.Helper()
	_, _, data := toyModel(t)
	requireORT(t)
	m, err := LoadModelBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Past MaxBatch inputs the batch calls run in several batches: every
// input's prediction and logits are its own, as one at a time gives them.
func TestBatchesPastMaxBatch(t *testing.T) {
	m := loadToyModel(t)
	defer m.Close()
	recs := toyRecords(2*MaxBatch+3, 7)
	ins := make([]Input, len(recs))
	for i := range recs {
		ins[i] = recs[i].Input
	}
	tokens := make([]int, len(ins))
	if err := m.PredictBatch(ins, tokens); err != nil {
		t.Fatal(err)
	}
	logits := make([]float32, len(ins)*NumClasses)
	if err := m.LogitsBatch(ins, logits); err != nil {
		t.Fatal(err)
	}
	one := make([]float32, NumClasses)
	for i, in := range ins {
		if err := m.LogitsBatch([]Input{in}, one); err != nil {
			t.Fatal(err)
		}
		for k := range one {
			if math.Abs(float64(one[k]-logits[i*NumClasses+k])) > 1e-5 {
				t.Fatalf("input %d: batched logit %d is %v, alone %v", i, k, logits[i*NumClasses+k], one[k])
			}
		}
		if want, _ := m.PredictLength(in); tokens[i] != want {
			t.Fatalf("input %d: batched prediction %d, alone %d", i, tokens[i], want)
		}
	}
}

func TestModelConcurrentUse(t *testing.T) {
	m := loadToyModel(t)
	defer m.Close()
	recs := toyRecords(40, 5)
	want := make([]int, len(recs))
	for i := range recs {
		want[i], _ = m.PredictLength(recs[i].Input)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range recs {
				if got, _ := m.PredictLength(recs[i].Input); got != want[i] {
					t.Errorf("goroutine %d input %d: %d, want %d", g, i, got, want[i])
				}
			}
			ins := []Input{recs[0].Input, recs[1].Input, recs[2].Input}
			out := make([]int, 3)
			if err := m.PredictBatch(ins, out); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.PredictBatch([]Input{{}}, make([]int, 1)); err == nil {
		t.Fatal("PredictBatch on a closed model: no error")
	}
}

func TestLoadDefault(t *testing.T) {
	info, err := ParseONNX(DefaultModelBytes())
	if err != nil {
		t.Fatalf("default model: %v", err)
	}
	if info.MLP == nil || info.OverflowTokens < NumBins*BinWidth {
		t.Fatalf("default model: MLP %v, overflow %d", info.MLP != nil, info.OverflowTokens)
	}
	requireORT(t)
	m, err := LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tokens, probs := m.PredictLength(Input{LastMessage: "Convert this to text to speech. ", ToolNames: []string{"tts", "image-gen"}, PromptTokens: 300,
		History: History{Calls: 1, MeanOutputTokens: 60, LastOutputTokens: 60}})
	if tokens < 0 || len(probs) != NumClasses {
		t.Fatalf("default model: %d tokens, %d probabilities", tokens, len(probs))
	}
}

func TestParseONNXErrors(t *testing.T) {
	_, _, good := toyModel(t)
	mutate := func(f func(*onnxpb.ModelProto)) []byte {
		var m onnxpb.ModelProto
		if err := proto.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(&m)
		b, err := proto.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	setMeta := func(key, value string) func(*onnxpb.ModelProto) {
		return func(m *onnxpb.ModelProto) {
			for _, p := range m.MetadataProps {
				if p.GetKey() == key {
					p.Value = proto.String(value)
				}
			}
		}
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty model file"},
		{"garbage", []byte("this is not an onnx model at all"), "not an ONNX protobuf"},
		{"truncated", good[:len(good)/2], "not an ONNX protobuf"},
		{"no graph", mutate(func(m *onnxpb.ModelProto) { m.Graph = nil }), "no graph"},
		{"other feature version", mutate(setMeta(MetaFeatureVersion, "999")), "feature version 999, this build computes version 2"},
		{"no feature version", mutate(func(m *onnxpb.ModelProto) { m.MetadataProps = nil }), "no " + MetaFeatureVersion},
		{"other bins", mutate(setMeta(MetaBins, "20")), "pitstop.bins"},
		{"bad overflow", mutate(setMeta(MetaOverflowTokens, "12")), MetaOverflowTokens},
		{"wrong input width", mutate(func(m *onnxpb.ModelProto) {
			m.Graph.Input[0].Type.GetTensorType().Shape.Dim[1].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 100}
		}), "shape [batch, 100], want [batch, 914]"},
		{"wrong input rank", mutate(func(m *onnxpb.ModelProto) {
			m.Graph.Input[0].Type.GetTensorType().Shape.Dim = m.Graph.Input[0].Type.GetTensorType().Shape.Dim[:1]
		}), "rank 1"},
		{"wrong input name", mutate(func(m *onnxpb.ModelProto) { m.Graph.Input[0].Name = proto.String("x") }), `want exactly ["features"]`},
		{"wrong output classes", mutate(func(m *onnxpb.ModelProto) {
			m.Graph.Output[0].Type.GetTensorType().Shape.Dim[1].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 10}
		}), "output logits"},
		{"no logits", mutate(func(m *onnxpb.ModelProto) { m.Graph.Output = m.Graph.Output[1:] }), `no output "logits"`},
		{"int input", mutate(func(m *onnxpb.ModelProto) {
			m.Graph.Input[0].Type.GetTensorType().ElemType = proto.Int32(int32(onnxpb.TensorProto_INT64))
		}), "element type INT64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseONNX(c.data)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrNotLengthModel) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want one wrapping ErrNotLengthModel containing %q", err, c.want)
			}
			if _, err := LoadModelBytes(c.data); err == nil {
				t.Fatal("LoadModelBytes: no error")
			}
		})
	}
}

// A graph that meets the declared contract but whose weights do not fit is
// refused by ONNX Runtime at load time, with a clear error.
func TestLoadModelRefusedByRuntime(t *testing.T) {
	mlp, over, _ := toyModel(t)
	requireORT(t)
	bad := *mlp
	bad.Hidden = mlp.Hidden - 1 // W1 is In×Hidden, but B1 and W2 keep the old sizes
	bad.W1 = mlp.W1[:mlp.In*bad.Hidden]
	bad.B1 = mlp.B1
	bad.W2 = mlp.W2
	data, err := marshalUnchecked(&bad, over)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadModelBytes(data)
	if err == nil || !errors.Is(err, ErrNotLengthModel) || !strings.Contains(err.Error(), "onnx runtime refused the model") {
		t.Fatalf("error %v, want an ONNX Runtime refusal", err)
	}
}

// marshalUnchecked exports an MLP whose weight sizes do not agree.
func marshalUnchecked(m *MLP, over int) ([]byte, error) {
	ok := &MLP{In: m.In, Hidden: len(m.B1), Out: m.Out, W1: make([]float32, m.In*len(m.B1)), B1: m.B1, W2: m.W2, B2: m.B2}
	data, err := MarshalONNX(ok, over, nil)
	if err != nil {
		return nil, err
	}
	var p onnxpb.ModelProto
	if err := proto.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	p.Graph.Initializer[0] = floatTensor("W1", m.W1, m.In, m.Hidden)
	return proto.Marshal(&p)
}

func TestLoadModelFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadModel(filepath.Join(dir, "missing.onnx")); err == nil || !strings.Contains(err.Error(), "missing.onnx") {
		t.Fatalf("missing file: %v", err)
	}
	p := filepath.Join(dir, "corrupt.onnx")
	os.WriteFile(p, []byte{0x08, 0xff, 0xff}, 0o644)
	if _, err := LoadModel(p); err == nil || !strings.Contains(err.Error(), "corrupt.onnx") || !errors.Is(err, ErrNotLengthModel) {
		t.Fatalf("corrupt file: %v", err)
	}
}

func TestORTLibraryPath(t *testing.T) {
	t.Setenv("PITSTOP_ORT_LIB", "/opt/x/libonnxruntime.so")
	if got := ORTLibraryPath(); got != "/opt/x/libonnxruntime.so" {
		t.Fatalf("with PITSTOP_ORT_LIB: %s", got)
	}
	t.Setenv("PITSTOP_ORT_LIB", "")
	t.Setenv("PITSTOP_CACHE", "/cache")
	if got, want := ORTLibraryPath(), "/cache/ort/"+ORTVersion+"/libonnxruntime.so.1"; got != want {
		t.Fatalf("with PITSTOP_CACHE: %s, want %s", got, want)
	}
	err := checkORTLibrary("/nonexistent/libonnxruntime.so.1")
	want := "onnx runtime library not found at /nonexistent/libonnxruntime.so.1: run scripts/fetch_ort.sh or set PITSTOP_ORT_LIB"
	if !errors.Is(err, ErrORTMissing) || err.Error() != want {
		t.Fatalf("missing library error %q, want %q", err, want)
	}
}

func TestHistoryPredictor(t *testing.T) {
	h := HistoryPredictor{Default: 42}
	if got, _ := h.PredictLength(Input{}); got != 42 {
		t.Fatalf("first segment: %d", got)
	}
	in := Input{History: History{}.Observe(10, "a").Observe(31, "b")}
	if got, _ := h.PredictLength(in); got != 21 {
		t.Fatalf("history mean: %d, want 21", got)
	}
}
