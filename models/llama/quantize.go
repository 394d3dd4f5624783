package llama

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/models/kernel"
)

// Quantized returns m with its projections and LM head quantized to t, as
// a GGUF file of that type would load (Layer.Quant, QLMHead); norms,
// biases and the embedding table are shared with m. For serving a
// float checkpoint quantized, and for benchmarks on dummy weights.
func (m *Model) Quantized(t kernel.QType) (*Model, error) {
	q := *m
	q.Layers = make([]Layer, len(m.Layers))
	c := &m.Config
	h, in := c.HiddenSize, c.IntermediateSize
	for i, l := range m.Layers {
		if l.WQKV == nil {
			return nil, fmt.Errorf("llama: layer %d is already quantized", i)
		}
		var err error
		quant := func(w []float32, rows, cols int) *kernel.QMatrix {
			if err != nil {
				return nil
			}
			var qm *kernel.QMatrix
			qm, err = kernel.Quantize(t, rows, cols, w)
			return qm
		}
		l.Quant = QuantLayer{
			WQKV:    quant(l.WQKV, c.QDim()+2*c.KVDim(), h),
			WO:      quant(l.WO, h, c.QDim()),
			WGateUp: quant(l.WGateUp, 2*in, h),
			WDown:   quant(l.WDown, h, in),
		}
		if err != nil {
			return nil, fmt.Errorf("llama: layer %d: %w", i, err)
		}
		l.WQKV, l.WO, l.WGateUp, l.WDown = nil, nil, nil, nil
		q.Layers[i] = l
	}
	head, err := kernel.Quantize(t, c.VocabSize, h, m.LMHead)
	if err != nil {
		return nil, fmt.Errorf("llama: LM head: %w", err)
	}
	q.QLMHead, q.LMHead = head, nil
	q.Source = fmt.Sprintf("%s, quantized to %v", m.Source, t)
	return &q, nil
}

// WeightBytes is the bytes of weights one decode step reads: every
// projection and the LM head as stored (quantized or float32), norms and
// biases. The embedding rows looked up are not counted.
func (m *Model) WeightBytes() int64 {
	var n int64
	qb := func(q *kernel.QMatrix, f []float32) int64 {
		if q != nil {
			n := int64(0)
			for p := q; p != nil; p = p.Next {
				n += int64(len(p.Data))
			}
			return n
		}
		return 4 * int64(len(f))
	}
	for _, l := range m.Layers {
		n += qb(l.Quant.WQKV, l.WQKV) + qb(l.Quant.WO, l.WO) + qb(l.Quant.WGateUp, l.WGateUp) + qb(l.Quant.WDown, l.WDown)
		n += 4 * int64(len(l.AttnNorm)+len(l.MLPNorm)+len(l.BQKV)+len(l.BO))
	}
	return n + qb(m.QLMHead, m.LMHead) + 4*int64(len(m.Norm))
}

// Dequantized returns m with its quantized projections expanded to
// float32: the weights a quantized model computes with, for saving as a
// Hugging Face checkpoint and for reference forwards.
func (m *Model) Dequantized() *Model {
	d := *m
	expand := func(q *kernel.QMatrix, f []float32) []float32 {
		if q == nil {
			return f
		}
		out := make([]float32, q.AllRows()*q.Cols)
		for r := range q.AllRows() {
			q.DequantizeRow(r, out[r*q.Cols:(r+1)*q.Cols])
		}
		return out
	}
	d.Layers = make([]Layer, len(m.Layers))
	for i, l := range m.Layers {
		l.WQKV, l.WO = expand(l.Quant.WQKV, l.WQKV), expand(l.Quant.WO, l.WO)
		l.WGateUp, l.WDown = expand(l.Quant.WGateUp, l.WGateUp), expand(l.Quant.WDown, l.WDown)
		l.Quant = QuantLayer{}
		d.Layers[i] = l
	}
	if m.QLMHead != nil {
		d.LMHead, d.QLMHead = expand(m.QLMHead, nil), nil
		if m.Config.TieEmbeddings {
			// A tied head quantized in the file is the embedding table as
			// the file stores it: the lookups use it dequantized too.
			d.LMHead = d.Embed
		}
	}
	return &d
}
