package calc

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// maxBits bounds the size of an exact value's numerator and denominator.
// Past it the value becomes a float64, so no expression can make the
// evaluator spend unbounded memory or time on huge rationals.
const maxBits = 4096

// maxDecimals is the longest exact decimal expansion printed; longer or
// non-terminating ones print as a float64 with 15 significant digits.
const maxDecimals = 40

// Value is a number: an exact rational while every step allows it (literals,
// + - * /, %, integer powers, abs, floor, ceil, round, min, max), a float64
// after an irrational step (sqrt of a non-square, ln, sin, pi, ...).
type Value struct {
	r *big.Rat // exact value, nil when inexact
	f float64  // the value when r is nil
}

// Exact reports whether v is held exactly (as a rational).
func (v Value) Exact() bool { return v.r != nil }

// Float64 returns v as a float64 (rounded if exact).
func (v Value) Float64() float64 {
	if v.r != nil {
		f, _ := v.r.Float64()
		return f
	}
	return v.f
}

// Rat returns a copy of v's exact value, or nil when v is inexact.
func (v Value) Rat() *big.Rat {
	if v.r == nil {
		return nil
	}
	return new(big.Rat).Set(v.r)
}

// exact returns r as an exact value, or as a float64 when it is too large to
// keep exactly; a value beyond float64's range is an overflow error.
func exact(r *big.Rat) (Value, error) {
	if r.Num().BitLen() > maxBits || r.Denom().BitLen() > maxBits {
		f, _ := r.Float64()
		if math.IsInf(f, 0) {
			return Value{}, &Error{Msg: "result overflows (too large)"}
		}
		return Value{f: f}, nil
	}
	return Value{r: r}, nil
}

func inexact(f float64) Value { return Value{f: f} }

func intValue(n int64) Value { return Value{r: new(big.Rat).SetInt64(n)} }

// isInt reports whether v is an exact integer.
func (v Value) isInt() bool { return v.r != nil && v.r.IsInt() }

func (v Value) sign() int {
	if v.r != nil {
		return v.r.Sign()
	}
	switch {
	case v.f > 0:
		return 1
	case v.f < 0:
		return -1
	}
	return 0
}

// String formats v for a person or a model: exact integers in full, exact
// terminating decimals in full (up to maxDecimals places), everything else
// rounded to 15 significant digits so that float noise (0.30000000000000004)
// does not show.
func (v Value) String() string {
	if v.r != nil {
		if v.r.IsInt() {
			return v.r.Num().String()
		}
		if places, ok := terminatingPlaces(v.r.Denom()); ok && places <= maxDecimals {
			s := v.r.FloatString(places)
			s = strings.TrimRight(s, "0")
			return strings.TrimSuffix(s, ".")
		}
		if f := v.Float64(); math.IsInf(f, 0) || f == 0 {
			// Beyond float64's range: 15 significant digits from the
			// rational itself.
			return new(big.Float).SetPrec(256).SetRat(v.r).Text('g', 15)
		}
	}
	return formatFloat(v.Float64())
}

// terminatingPlaces returns how many decimal places 1/d needs when d has no
// prime factors but 2 and 5.
func terminatingPlaces(d *big.Int) (int, bool) {
	x := new(big.Int).Set(d)
	twos := int(x.TrailingZeroBits())
	x.Rsh(x, uint(twos))
	fives := 0
	five := big.NewInt(5)
	m := new(big.Int)
	for x.Cmp(big.NewInt(1)) != 0 {
		q, r := new(big.Int).QuoRem(x, five, m)
		if r.Sign() != 0 {
			return 0, false
		}
		x = q
		fives++
		if fives > maxDecimals {
			return 0, false
		}
	}
	return max(twos, fives), true
}

// roundSig rounds f to 15 significant digits, the precision float64 results
// are shown with.
func roundSig(f float64) float64 {
	g, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if err != nil {
		return f
	}
	return g
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	g := roundSig(f)
	if g == 0 {
		return "0"
	}
	if a := math.Abs(g); a >= 1e-7 && a < 1e21 {
		return strconv.FormatFloat(g, 'f', -1, 64)
	}
	return strconv.FormatFloat(g, 'g', -1, 64)
}

// snapped returns v as an exact value; a float becomes the decimal it is
// shown as (15 significant digits), so that floor, ceil and round act on
// what the user sees (round(2.675, 2) is 2.68, floor of a float shown as 3
// is 3).
func (v Value) snapped() *big.Rat {
	if v.r != nil {
		return v.r
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v.f, 'g', 15, 64))
	if !ok {
		return nil
	}
	return r
}

// FormatRat formats an exact rational the way results are shown (see
// Value.String).
func FormatRat(r *big.Rat) string { return Value{r: r}.String() }

// FormatFloat formats a float64 the way inexact results are shown: 15
// significant digits, no float noise.
func FormatFloat(f float64) string { return formatFloat(f) }
