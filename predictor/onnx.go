package predictor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/pitstop-llm/pitstop/predictor/onnxpb"
)

// The ONNX contract of a length model: one float input "features" of shape
// [batch, FeatureDim], a float output "logits" of shape [batch, NumClasses]
// (softmax is left to the caller) and, in models pitstop exports, an int64
// output "bin" = ArgMax(logits, axis 1). Metadata (model metadata_props) names
// the feature layout and the bins.
const (
	InputName  = "features"
	OutputName = "logits"
	BinOutput  = "bin"

	MetaFeatureVersion = "pitstop.feature_version"
	MetaFeatureDim     = "pitstop.feature_dim"
	MetaBins           = "pitstop.bins"
	MetaBinWidth       = "pitstop.bin_width"
	MetaOverflowTokens = "pitstop.overflow_tokens"

	onnxOpset     = 13
	onnxIRVersion = 8
)

// ErrNotLengthModel is wrapped by ParseONNX's errors for data that is not an
// ONNX model meeting the contract above.
var ErrNotLengthModel = errors.New("not a pitstop length model")

// ModelInfo is what ParseONNX reads from a length model.
type ModelInfo struct {
	FeatureVersion int
	OverflowTokens int
	Metadata       map[string]string // all metadata_props
	// MLP holds the weights when the graph is pitstop's Gemm–Relu–Gemm, so the
	// Go forward pass can run it; nil for another graph with the same contract.
	MLP *MLP
}

// MarshalONNX encodes m as an ONNX model (opset 13): Gemm → Relu → Gemm →
// logits, plus ArgMax → bin. meta is added to metadata_props after the keys
// pitstop sets (feature version and dimension, bins, bin width, overflow
// tokens), which meta cannot override.
func MarshalONNX(m *MLP, overflowTokens int, meta map[string]string) ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	if m.In != FeatureDim || m.Out != NumClasses {
		return nil, fmt.Errorf("onnx export: model is %d→%d, want %d features → %d classes", m.In, m.Out, FeatureDim, NumClasses)
	}
	props := map[string]string{}
	maps.Copy(props, meta)
	props[MetaFeatureVersion] = strconv.Itoa(FeatureVersion)
	props[MetaFeatureDim] = strconv.Itoa(FeatureDim)
	props[MetaBins] = strconv.Itoa(NumBins)
	props[MetaBinWidth] = strconv.Itoa(BinWidth)
	props[MetaOverflowTokens] = strconv.Itoa(overflowTokens)
	var metaProps []*onnxpb.StringStringEntryProto
	for _, k := range slices.Sorted(maps.Keys(props)) {
		metaProps = append(metaProps, &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(props[k])})
	}

	batch := &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}}
	dim := func(n int) *onnxpb.TensorShapeProto_Dimension {
		return &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(n)}}
	}
	valueInfo := func(name string, elem onnxpb.TensorProto_DataType, dims ...*onnxpb.TensorShapeProto_Dimension) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{
			Name: proto.String(name),
			Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
				ElemType: proto.Int32(int32(elem)),
				Shape:    &onnxpb.TensorShapeProto{Dim: dims},
			}}},
		}
	}
	node := func(op, name string, in, out []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: in, Output: out, Attribute: attrs}
	}
	intAttr := func(name string, v int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
	}
	graph := &onnxpb.GraphProto{
		Name: proto.String("pitstop_length_classifier"),
		Node: []*onnxpb.NodeProto{
			node("Gemm", "fc1", []string{InputName, "W1", "B1"}, []string{"fc1_out"}),
			node("Relu", "relu1", []string{"fc1_out"}, []string{"hidden"}),
			node("Gemm", "fc2", []string{"hidden", "W2", "B2"}, []string{OutputName}),
			node("ArgMax", "argmax", []string{OutputName}, []string{BinOutput}, intAttr("axis", 1), intAttr("keepdims", 0)),
		},
		Initializer: []*onnxpb.TensorProto{
			floatTensor("W1", m.W1, m.In, m.Hidden),
			floatTensor("B1", m.B1, m.Hidden),
			floatTensor("W2", m.W2, m.Hidden, m.Out),
			floatTensor("B2", m.B2, m.Out),
		},
		Input: []*onnxpb.ValueInfoProto{valueInfo(InputName, onnxpb.TensorProto_FLOAT, batch, dim(FeatureDim))},
		Output: []*onnxpb.ValueInfoProto{
			valueInfo(OutputName, onnxpb.TensorProto_FLOAT, batch, dim(NumClasses)),
			valueInfo(BinOutput, onnxpb.TensorProto_INT64, batch),
		},
	}
	model := &onnxpb.ModelProto{
		IrVersion:       proto.Int64(onnxIRVersion),
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(onnxOpset)}},
		ProducerName:    proto.String("pitstop"),
		ProducerVersion: proto.String(fmt.Sprintf("predictor/features-v%d", FeatureVersion)),
		DocString:       proto.String("pitstop pre-tool output-length classifier: 50 bins of 10 tokens + overflow (LAMPS)"),
		Graph:           graph,
		MetadataProps:   metaProps,
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(model)
}

func floatTensor(name string, data []float32, dims ...int) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	d := make([]int64, len(dims))
	for i, n := range dims {
		d[i] = int64(n)
	}
	return &onnxpb.TensorProto{
		Name:     proto.String(name),
		DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
		Dims:     d,
		RawData:  raw,
	}
}

// ParseONNX decodes an ONNX model and checks it against the length-model
// contract: metadata with this build's FeatureVersion and the 50×10 bins, an
// input "features" [batch, FeatureDim] float and an output "logits"
// [batch, NumClasses] float. Errors wrap ErrNotLengthModel.
func ParseONNX(data []byte) (*ModelInfo, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrNotLengthModel, fmt.Sprintf(format, args...))
	}
	if len(data) == 0 {
		return nil, bad("empty model file")
	}
	var model onnxpb.ModelProto
	if err := proto.Unmarshal(data, &model); err != nil {
		return nil, bad("not an ONNX protobuf: %v", err)
	}
	g := model.GetGraph()
	if g == nil || len(g.GetNode()) == 0 {
		return nil, bad("ONNX model has no graph")
	}
	info := &ModelInfo{Metadata: map[string]string{}}
	for _, p := range model.GetMetadataProps() {
		info.Metadata[p.GetKey()] = p.GetValue()
	}
	v, ok := info.Metadata[MetaFeatureVersion]
	if !ok {
		return nil, bad("metadata has no %s", MetaFeatureVersion)
	}
	fv, err := strconv.Atoi(v)
	if err != nil {
		return nil, bad("metadata %s = %q is not a number", MetaFeatureVersion, v)
	}
	info.FeatureVersion = fv
	if fv != FeatureVersion {
		return nil, fmt.Errorf("%w: model was trained on feature version %d, this build computes version %d: retrain it (pitstop predictor train)",
			ErrNotLengthModel, fv, FeatureVersion)
	}
	for key, want := range map[string]int{MetaBins: NumBins, MetaBinWidth: BinWidth, MetaFeatureDim: FeatureDim} {
		if s, ok := info.Metadata[key]; ok {
			if n, err := strconv.Atoi(s); err != nil || n != want {
				return nil, bad("metadata %s = %q, this build needs %d", key, s, want)
			}
		}
	}
	info.OverflowTokens = DefaultOverflowTokens
	if s, ok := info.Metadata[MetaOverflowTokens]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < NumBins*BinWidth {
			return nil, bad("metadata %s = %q, want an integer ≥ %d", MetaOverflowTokens, s, NumBins*BinWidth)
		}
		info.OverflowTokens = n
	}

	inits := map[string]*onnxpb.TensorProto{}
	for _, t := range g.GetInitializer() {
		inits[t.GetName()] = t
	}
	var inputs []*onnxpb.ValueInfoProto
	for _, in := range g.GetInput() {
		if _, isInit := inits[in.GetName()]; !isInit {
			inputs = append(inputs, in)
		}
	}
	if len(inputs) != 1 || inputs[0].GetName() != InputName {
		names := make([]string, len(inputs))
		for i, in := range inputs {
			names[i] = in.GetName()
		}
		return nil, bad("graph inputs are %q, want exactly [%q]", names, InputName)
	}
	if err := checkTensorInfo(inputs[0], onnxpb.TensorProto_FLOAT, FeatureDim); err != nil {
		return nil, bad("input %s: %v", InputName, err)
	}
	var logits *onnxpb.ValueInfoProto
	for _, out := range g.GetOutput() {
		if out.GetName() == OutputName {
			logits = out
		}
	}
	if logits == nil {
		return nil, bad("graph has no output %q", OutputName)
	}
	if err := checkTensorInfo(logits, onnxpb.TensorProto_FLOAT, NumClasses); err != nil {
		return nil, bad("output %s: %v", OutputName, err)
	}
	info.MLP = mlpFromGraph(g, inits)
	return info, nil
}

// checkTensorInfo checks a rank-2 tensor of elem whose second dimension is n.
func checkTensorInfo(vi *onnxpb.ValueInfoProto, elem onnxpb.TensorProto_DataType, n int) error {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return errors.New("not a tensor")
	}
	if got := onnxpb.TensorProto_DataType(tt.GetElemType()); got != elem {
		return fmt.Errorf("element type %v, want %v", got, elem)
	}
	dims := tt.GetShape().GetDim()
	if len(dims) != 2 {
		return fmt.Errorf("rank %d, want 2 ([batch, %d])", len(dims), n)
	}
	if d, ok := dims[1].GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); !ok || d.DimValue != int64(n) {
		return fmt.Errorf("shape [batch, %s], want [batch, %d]", dimString(dims[1]), n)
	}
	return nil
}

func dimString(d *onnxpb.TensorShapeProto_Dimension) string {
	switch v := d.GetValue().(type) {
	case *onnxpb.TensorShapeProto_Dimension_DimValue:
		return strconv.FormatInt(v.DimValue, 10)
	case *onnxpb.TensorShapeProto_Dimension_DimParam:
		return v.DimParam
	}
	return "?"
}

// mlpFromGraph recovers the weights of pitstop's Gemm(features,W1,B1) → Relu →
// Gemm(·,W2,B2) graph; nil when the graph has another form.
func mlpFromGraph(g *onnxpb.GraphProto, inits map[string]*onnxpb.TensorProto) *MLP {
	var gemms []*onnxpb.NodeProto
	relus := 0
	for _, n := range g.GetNode() {
		switch n.GetOpType() {
		case "Gemm":
			for _, a := range n.GetAttribute() {
				switch a.GetName() {
				case "transA", "transB":
					if a.GetI() != 0 {
						return nil
					}
				case "alpha", "beta":
					if a.GetF() != 1 {
						return nil
					}
				}
			}
			if len(n.GetInput()) != 3 {
				return nil
			}
			gemms = append(gemms, n)
		case "Relu":
			relus++
		case "ArgMax":
		default:
			return nil
		}
	}
	if len(gemms) != 2 || relus != 1 || gemms[0].GetInput()[0] != InputName || gemms[1].GetOutput()[0] != OutputName {
		return nil
	}
	w1, d1 := floatsOf(inits[gemms[0].GetInput()[1]])
	b1, _ := floatsOf(inits[gemms[0].GetInput()[2]])
	w2, d2 := floatsOf(inits[gemms[1].GetInput()[1]])
	b2, _ := floatsOf(inits[gemms[1].GetInput()[2]])
	if len(d1) != 2 || len(d2) != 2 {
		return nil
	}
	m := &MLP{In: int(d1[0]), Hidden: int(d1[1]), Out: int(d2[1]), W1: w1, B1: b1, W2: w2, B2: b2}
	if d2[0] != d1[1] || m.validate() != nil || m.In != FeatureDim || m.Out != NumClasses {
		return nil
	}
	return m
}

func floatsOf(t *onnxpb.TensorProto) ([]float32, []int64) {
	if t == nil || onnxpb.TensorProto_DataType(t.GetDataType()) != onnxpb.TensorProto_FLOAT {
		return nil, nil
	}
	n := int64(1)
	for _, d := range t.GetDims() {
		n *= d
	}
	if raw := t.GetRawData(); len(raw) > 0 {
		if int64(len(raw)) != 4*n {
			return nil, nil
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out, t.GetDims()
	}
	if fd := t.GetFloatData(); int64(len(fd)) == n {
		return slices.Clone(fd), t.GetDims()
	}
	return nil, nil
}
