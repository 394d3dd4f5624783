package predictor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Output-length bins, as in LAMPS §5: 50 bins of 10 tokens cover 0–499 tokens;
// one more class holds everything longer (the overflow bin).
const (
	NumBins     = 50
	BinWidth    = 10
	NumClasses  = NumBins + 1
	OverflowBin = NumBins
	// DefaultOverflowTokens is the prediction for the overflow bin when a
	// model's metadata does not give one. Trained models store the median of
	// their training set's overflow lengths instead (MetaOverflowTokens).
	DefaultOverflowTokens = 750
)

// BinOf is the class of an output of tokens tokens: tokens/10, or OverflowBin
// from 500 tokens on. Negative lengths count as 0.
func BinOf(tokens int) int {
	if tokens < 0 {
		tokens = 0
	}
	return min(tokens/BinWidth, OverflowBin)
}

// BinTokens is the predicted length of class bin: the middle of the bin,
// bin·10+5 (LAMPS), or overflowTokens for the overflow bin.
func BinTokens(bin, overflowTokens int) int {
	if bin >= OverflowBin {
		return overflowTokens
	}
	return bin*BinWidth + BinWidth/2
}

// MLP is the classifier: features → Hidden (ReLU) → NumClasses logits.
// Weights are row-major with the input index first (W1[i*Hidden+j],
// W2[j*Out+k]), the layout of ONNX Gemm's B operand without transB.
type MLP struct {
	In, Hidden, Out int
	W1, B1, W2, B2  []float32
}

// NewMLP returns an MLP with He-initialised weights drawn from seed.
func NewMLP(in, hidden, out int, seed uint64) *MLP {
	m := &MLP{In: in, Hidden: hidden, Out: out,
		W1: make([]float32, in*hidden), B1: make([]float32, hidden),
		W2: make([]float32, hidden*out), B2: make([]float32, out)}
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	s1 := math.Sqrt(2 / float64(in))
	for i := range m.W1 {
		m.W1[i] = float32(rng.NormFloat64() * s1)
	}
	s2 := math.Sqrt(2 / float64(hidden))
	for i := range m.W2 {
		m.W2[i] = float32(rng.NormFloat64() * s2)
	}
	return m
}

func (m *MLP) validate() error {
	switch {
	case m.In <= 0 || m.Hidden <= 0 || m.Out <= 0:
		return fmt.Errorf("mlp: bad dimensions %d→%d→%d", m.In, m.Hidden, m.Out)
	case len(m.W1) != m.In*m.Hidden, len(m.B1) != m.Hidden,
		len(m.W2) != m.Hidden*m.Out, len(m.B2) != m.Out:
		return fmt.Errorf("mlp: weight sizes do not match %d→%d→%d", m.In, m.Hidden, m.Out)
	}
	return nil
}

// Forward computes the logits of one feature vector x (len In) into logits
// (len Out), using hidden (len Hidden) as scratch. It allocates nothing and
// skips zero features (hashed features are sparse).
func (m *MLP) Forward(x, hidden, logits []float32) {
	H, O := m.Hidden, m.Out
	hidden = hidden[:H]
	copy(hidden, m.B1)
	for i, v := range x[:m.In] {
		if v == 0 {
			continue
		}
		row := m.W1[i*H : i*H+H]
		h := hidden[:len(row)] // no bounds checks below
		for j, w := range row {
			h[j] += v * w
		}
	}
	logits = logits[:O]
	copy(logits, m.B2)
	for j, v := range hidden {
		if v <= 0 {
			hidden[j] = 0
			continue
		}
		row := m.W2[j*O : j*O+O]
		l := logits[:len(row)]
		for k, w := range row {
			l[k] += v * w
		}
	}
}

// TrainOptions configures Train. Zero values take the defaults noted.
type TrainOptions struct {
	Hidden      int     // hidden units (64)
	Epochs      int     // passes over the data (60)
	BatchSize   int     // minibatch size (32)
	LR          float64 // Adam learning rate (1e-3)
	WeightDecay float64 // decoupled (AdamW) weight decay on W1, W2 (1e-4)
	Seed        uint64  // initialisation and shuffling seed (1)
	// Progress, if set, is called after every epoch with the mean training loss.
	Progress func(epoch int, loss float64)
}

func (o TrainOptions) withDefaults() TrainOptions {
	if o.Hidden <= 0 {
		o.Hidden = 64
	}
	if o.Epochs <= 0 {
		o.Epochs = 60
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 32
	}
	if o.LR <= 0 {
		o.LR = 1e-3
	}
	if o.WeightDecay < 0 {
		o.WeightDecay = 0
	} else if o.WeightDecay == 0 {
		o.WeightDecay = 1e-4
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Train fits an MLP to feature vectors X (each len in) and classes y (in
// [0, classes)) with softmax cross-entropy, minibatch Adam and a deterministic
// seed: the same data and options give the same weights.
func Train(X [][]float32, y []int, in, classes int, opt TrainOptions) (*MLP, error) {
	opt = opt.withDefaults()
	if len(X) == 0 {
		return nil, errors.New("train: no examples")
	}
	if len(X) != len(y) {
		return nil, fmt.Errorf("train: %d feature vectors but %d labels", len(X), len(y))
	}
	for i := range X {
		if len(X[i]) != in {
			return nil, fmt.Errorf("train: example %d has %d features, want %d", i, len(X[i]), in)
		}
		if y[i] < 0 || y[i] >= classes {
			return nil, fmt.Errorf("train: example %d has class %d outside [0,%d)", i, y[i], classes)
		}
	}
	m := NewMLP(in, opt.Hidden, classes, opt.Seed)
	H, O := m.Hidden, m.Out
	rng := rand.New(rand.NewPCG(opt.Seed+1, opt.Seed^0xfeed))

	params := [][]float32{m.W1, m.B1, m.W2, m.B2}
	decay := []bool{true, false, true, false}
	grads := make([][]float32, len(params))
	mom := make([][]float32, len(params))
	vel := make([][]float32, len(params))
	for i, p := range params {
		grads[i] = make([]float32, len(p))
		mom[i] = make([]float32, len(p))
		vel[i] = make([]float32, len(p))
	}
	gW1, gB1, gW2, gB2 := grads[0], grads[1], grads[2], grads[3]
	// Rows of W1 touched in this batch: features are sparse, so the W1
	// gradient is cleared row by row instead of whole.
	touched := make([]bool, in)
	var touchedRows []int

	hidden := make([]float32, H)
	logits := make([]float32, O)
	dlogits := make([]float32, O)
	dhidden := make([]float32, H)
	order := make([]int, len(X))
	for i := range order {
		order[i] = i
	}
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	step := 0
	for epoch := 0; epoch < opt.Epochs; epoch++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var lossSum float64
		for start := 0; start < len(order); start += opt.BatchSize {
			batch := order[start:min(start+opt.BatchSize, len(order))]
			for _, r := range touchedRows {
				clear(gW1[r*H : r*H+H])
				touched[r] = false
			}
			touchedRows = touchedRows[:0]
			clear(gB1)
			clear(gW2)
			clear(gB2)
			scale := float32(1) / float32(len(batch))
			for _, n := range batch {
				x := X[n]
				m.Forward(x, hidden, logits)
				lossSum += softmaxGrad(logits, y[n], dlogits)
				for k := range dlogits {
					dlogits[k] *= scale
				}
				for k, d := range dlogits {
					gB2[k] += d
				}
				for j, h := range hidden {
					var dh float32
					if h > 0 {
						row := m.W2[j*O : j*O+O]
						grow := gW2[j*O : j*O+O]
						for k, d := range dlogits {
							grow[k] += h * d
							dh += row[k] * d
						}
					}
					dhidden[j] = dh
				}
				for j, d := range dhidden {
					gB1[j] += d
				}
				for i, v := range x {
					if v == 0 {
						continue
					}
					if !touched[i] {
						touched[i] = true
						touchedRows = append(touchedRows, i)
					}
					grow := gW1[i*H : i*H+H]
					for j, d := range dhidden {
						grow[j] += v * d
					}
				}
			}
			step++
			c1 := 1 - math.Pow(beta1, float64(step))
			c2 := 1 - math.Pow(beta2, float64(step))
			lr := opt.LR * math.Sqrt(c2) / c1
			for pi, p := range params {
				g, mo, ve := grads[pi], mom[pi], vel[pi]
				wd := float32(0)
				if decay[pi] {
					wd = float32(opt.LR * opt.WeightDecay)
				}
				for i := range p {
					gi := g[i]
					mo[i] = beta1*mo[i] + (1-beta1)*gi
					ve[i] = beta2*ve[i] + (1-beta2)*gi*gi
					p[i] -= float32(lr*float64(mo[i])/(math.Sqrt(float64(ve[i]))+eps)) + wd*p[i]
				}
			}
		}
		if opt.Progress != nil {
			opt.Progress(epoch, lossSum/float64(len(X)))
		}
	}
	return m, nil
}

// softmaxGrad writes softmax(logits) − onehot(target) into grad and returns
// the cross-entropy loss.
func softmaxGrad(logits []float32, target int, grad []float32) float64 {
	mx := logits[0]
	for _, v := range logits[1:] {
		mx = max(mx, v)
	}
	var sum float64
	for k, v := range logits {
		e := math.Exp(float64(v - mx))
		grad[k] = float32(e)
		sum += e
	}
	inv := 1 / sum
	for k := range grad {
		grad[k] = float32(float64(grad[k]) * inv)
	}
	p := float64(grad[target])
	grad[target] -= 1
	return -math.Log(max(p, 1e-12))
}

// Softmax writes the probabilities of logits into dst (same length) in place-safe fashion.
func Softmax(logits, dst []float32) {
	mx := logits[0]
	for _, v := range logits[1:] {
		mx = max(mx, v)
	}
	var sum float64
	for k, v := range logits {
		e := math.Exp(float64(v - mx))
		dst[k] = float32(e)
		sum += e
	}
	inv := float32(1 / sum)
	for k := range dst[:len(logits)] {
		dst[k] *= inv
	}
}

// Argmax is the index of the largest element (the first one on ties).
func Argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
