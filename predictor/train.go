package predictor

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// SplitTraces splits records into a training and a held-out part by program
// (all segments of a program land on the same side, so the held-out part has
// programs the model never saw): a program goes to training when a hash of
// its id and seed falls below frac. Records with no program id are split by
// source and index. The split is deterministic.
func SplitTraces(recs []TraceRecord, frac float64, seed uint64) (train, test []TraceRecord, err error) {
	if !(frac > 0 && frac < 1) {
		return nil, nil, fmt.Errorf("split: fraction %v is not in (0,1)", frac)
	}
	for i, r := range recs {
		key := r.Source + "\x00" + r.Program
		if r.Program == "" {
			key += "\x00" + strconv.Itoa(i)
		}
		h := mix64(hashString(key) ^ mix64(seed))
		if float64(h>>11)/float64(1<<53) < frac {
			train = append(train, r)
		} else {
			test = append(test, r)
		}
	}
	if len(train) == 0 || len(test) == 0 {
		return nil, nil, fmt.Errorf("split: %d records give %d for training and %d held out; need both", len(recs), len(train), len(test))
	}
	return train, test, nil
}

// FeaturizeTraces returns the feature vectors and classes of recs.
func FeaturizeTraces(recs []TraceRecord) ([][]float32, []int) {
	X := make([][]float32, len(recs))
	y := make([]int, len(recs))
	buf := make([]float32, len(recs)*FeatureDim)
	for i := range recs {
		X[i] = buf[i*FeatureDim : (i+1)*FeatureDim : (i+1)*FeatureDim]
		Featurize(recs[i].Input, X[i])
		y[i] = BinOf(recs[i].PreToolOutputTokens)
	}
	return X, y
}

// OverflowTokensOf is the prediction for the overflow bin that training on
// recs gives: the median length of its overflow records, or
// DefaultOverflowTokens if it has none.
func OverflowTokensOf(recs []TraceRecord) int {
	var over []int
	for _, r := range recs {
		if BinOf(r.PreToolOutputTokens) == OverflowBin {
			over = append(over, r.PreToolOutputTokens)
		}
	}
	if len(over) == 0 {
		return DefaultOverflowTokens
	}
	sort.Ints(over)
	return over[len(over)/2]
}

// TrainLengthModel trains the classifier on recs and returns it with its
// overflow prediction (OverflowTokensOf).
func TrainLengthModel(recs []TraceRecord, opt TrainOptions) (*MLP, int, error) {
	if len(recs) == 0 {
		return nil, 0, errors.New("train: no trace records")
	}
	X, y := FeaturizeTraces(recs)
	m, err := Train(X, y, FeatureDim, NumClasses, opt)
	if err != nil {
		return nil, 0, err
	}
	return m, OverflowTokensOf(recs), nil
}

// MedianTokens is the median pre-tool output length of recs (0 if none): the
// constant baseline predictor's value.
func MedianTokens(recs []TraceRecord) int {
	if len(recs) == 0 {
		return 0
	}
	v := make([]int, len(recs))
	for i, r := range recs {
		v[i] = r.PreToolOutputTokens
	}
	slices.Sort(v)
	return v[len(v)/2]
}
