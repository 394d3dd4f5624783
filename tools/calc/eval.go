package calc

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
)

// Eval parses and evaluates expr. Syntax errors are reported before any
// evaluation error (division by zero, ...). A trailing "=" is ignored.
func Eval(expr string) (Value, error) {
	if len(expr) > MaxLength {
		return Value{}, &Error{Msg: fmt.Sprintf("expression too long (%d bytes, at most %d)", len(expr), MaxLength)}
	}
	s := strings.TrimSpace(expr)
	s = strings.TrimSpace(strings.TrimSuffix(s, "="))
	if s == "" {
		return Value{}, &Error{Msg: "empty expression"}
	}
	toks, err := lex(s)
	if err != nil {
		return Value{}, err
	}
	p := &parser{toks: toks}
	n, err := p.expr()
	if err != nil {
		return Value{}, err
	}
	if t := p.peek(); t.kind != tEOF {
		msg := fmt.Sprintf("unexpected %s", t.describe())
		if t.kind == tOp && t.text == ")" {
			msg = "unmatched ')'"
		} else if t.kind == tNum || t.kind == tName || t.text == "(" {
			msg += " (missing operator? write 2*x, not 2x)"
		}
		return Value{}, &Error{Pos: t.pos, Msg: msg}
	}
	v, err := eval(n)
	if err != nil {
		return Value{}, err
	}
	return v, nil
}

// Calculate evaluates expr and formats the result (see Value.String).
func Calculate(expr string) (string, error) {
	v, err := Eval(expr)
	if err != nil {
		return "", err
	}
	return v.String(), nil
}

func evalErr(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// checkFloat turns a non-finite float result into an error.
func checkFloat(f float64, what string) (Value, error) {
	switch {
	case math.IsNaN(f):
		return Value{}, evalErr("%s is undefined (not a real number)", what)
	case math.IsInf(f, 0):
		return Value{}, evalErr("%s overflows (result too large)", what)
	}
	return inexact(f), nil
}

func eval(n node) (Value, error) {
	switch n := n.(type) {
	case *numNode:
		return n.v, nil
	case *nameNode:
		switch n.name {
		case "pi", "π":
			return inexact(math.Pi), nil
		case "e":
			return inexact(math.E), nil
		case "tau":
			return inexact(2 * math.Pi), nil
		}
		if _, isFunc := functions[n.name]; isFunc {
			return Value{}, evalErr("%s is a function: write %s(x)", n.name, n.name)
		}
		return Value{}, evalErr("unknown name %q; known constants: pi, e", n.name)
	case *unaryNode:
		x, err := eval(n.x)
		if err != nil {
			return Value{}, err
		}
		if n.op == "+" {
			return x, nil
		}
		return neg(x), nil
	case *binNode:
		l, err := eval(n.l)
		if err != nil {
			return Value{}, err
		}
		r, err := eval(n.r)
		if err != nil {
			return Value{}, err
		}
		switch n.op {
		case "+":
			return add(l, r)
		case "-":
			return add(l, neg(r))
		case "*":
			return mul(l, r)
		case "/":
			return div(l, r)
		case "%":
			return mod(l, r)
		case "^":
			return pow(l, r)
		}
		return Value{}, evalErr("unknown operator %q", n.op)
	case *callNode:
		f, ok := functions[n.name]
		if !ok {
			if n.name == "log" {
				return Value{}, evalErr("log is ambiguous: use ln (natural logarithm) or log10")
			}
			return Value{}, evalErr("unknown function %q; available: %s", n.name, strings.Join(functionNames(), ", "))
		}
		if len(n.args) < f.min || (f.max >= 0 && len(n.args) > f.max) {
			return Value{}, evalErr("%s expects %s, got %d", n.name, f.arity(), len(n.args))
		}
		args := make([]Value, len(n.args))
		for i, a := range n.args {
			v, err := eval(a)
			if err != nil {
				return Value{}, err
			}
			args[i] = v
		}
		return f.fn(args)
	}
	return Value{}, evalErr("internal error: unknown node %T", n)
}

func neg(x Value) Value {
	if x.r != nil {
		return Value{r: new(big.Rat).Neg(x.r)}
	}
	return inexact(-x.f)
}

func add(a, b Value) (Value, error) {
	if a.r != nil && b.r != nil {
		return exact(new(big.Rat).Add(a.r, b.r))
	}
	return checkFloat(a.Float64()+b.Float64(), "sum")
}

func mul(a, b Value) (Value, error) {
	if a.r != nil && b.r != nil {
		return exact(new(big.Rat).Mul(a.r, b.r))
	}
	return checkFloat(a.Float64()*b.Float64(), "product")
}

func div(a, b Value) (Value, error) {
	if b.sign() == 0 {
		return Value{}, evalErr("division by zero")
	}
	if a.r != nil && b.r != nil {
		return exact(new(big.Rat).Quo(a.r, b.r))
	}
	return checkFloat(a.Float64()/b.Float64(), "quotient")
}

// mod is the floored modulo: a - b*floor(a/b), the sign of the divisor.
func mod(a, b Value) (Value, error) {
	if b.sign() == 0 {
		return Value{}, evalErr("modulo by zero")
	}
	if a.r != nil && b.r != nil {
		q := new(big.Rat).Quo(a.r, b.r)
		fl := floorRat(q)
		return exact(new(big.Rat).Sub(a.r, new(big.Rat).Mul(b.r, fl)))
	}
	x, y := a.Float64(), b.Float64()
	r := math.Mod(x, y)
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return checkFloat(r, "modulo")
}

// maxExactExponent bounds integer exponents computed exactly.
const maxExactExponent = 1 << 20

func pow(a, b Value) (Value, error) {
	if a.sign() == 0 && b.sign() < 0 {
		return Value{}, evalErr("division by zero (0 raised to a negative power)")
	}
	if a.r != nil && b.isInt() {
		if r, ok := powExact(a.r, b.r.Num()); ok {
			return exact(r)
		}
	}
	x, y := a.Float64(), b.Float64()
	if x < 0 && y != math.Trunc(y) {
		return Value{}, evalErr("negative number raised to a fractional power is not a real number")
	}
	return checkFloat(math.Pow(x, y), "power")
}

// powExact computes a^n exactly when the result stays within maxBits.
func powExact(a *big.Rat, n *big.Int) (*big.Rat, bool) {
	switch {
	case a.Sign() == 0:
		if n.Sign() == 0 {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case a.IsInt() && a.Num().CmpAbs(big.NewInt(1)) == 0:
		if a.Sign() > 0 || n.Bit(0) == 0 {
			return big.NewRat(1, 1), true
		}
		return big.NewRat(-1, 1), true
	}
	if !n.IsInt64() || n.Int64() > maxExactExponent || n.Int64() < -maxExactExponent {
		return nil, false
	}
	e := n.Int64()
	ae := e
	if ae < 0 {
		ae = -ae
	}
	bits := int64(max(a.Num().BitLen(), a.Denom().BitLen()))
	if (bits-1)*ae > maxBits {
		return nil, false
	}
	num := new(big.Int).Exp(a.Num(), big.NewInt(ae), nil)
	den := new(big.Int).Exp(a.Denom(), big.NewInt(ae), nil)
	if e < 0 {
		num, den = den, num
	}
	return new(big.Rat).SetFrac(num, den), true
}

func floorRat(r *big.Rat) *big.Rat {
	q := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: floor for a positive denominator
	return new(big.Rat).SetInt(q)
}

func ceilRat(r *big.Rat) *big.Rat {
	f := floorRat(r)
	if f.Cmp(r) != 0 {
		f.Add(f, big.NewRat(1, 1))
	}
	return f
}

// roundRat rounds half away from zero.
func roundRat(r *big.Rat) *big.Rat {
	half := big.NewRat(1, 2)
	if r.Sign() >= 0 {
		return floorRat(new(big.Rat).Add(r, half))
	}
	return new(big.Rat).Neg(floorRat(new(big.Rat).Add(new(big.Rat).Neg(r), half)))
}

type function struct {
	min, max int // max < 0: variadic
	fn       func([]Value) (Value, error)
}

func (f function) arity() string {
	switch {
	case f.max < 0:
		return fmt.Sprintf("at least %d argument(s)", f.min)
	case f.min == f.max && f.min == 1:
		return "1 argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

func functionNames() []string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// float1 wraps a float64 function of one argument with a domain check.
func float1(name string, f func(float64) float64, domain func(float64) string) function {
	return function{1, 1, func(a []Value) (Value, error) {
		x := a[0].Float64()
		if domain != nil {
			if msg := domain(x); msg != "" {
				return Value{}, evalErr("%s: %s", name, msg)
			}
		}
		return checkFloat(f(x), name)
	}}
}

// trig wraps sin, cos and tan: a result that is float noise around zero at
// a multiple of pi/2 (sin(pi) = 1.2e-16) becomes 0.
func trig(name string, f func(float64) float64) function {
	return float1(name, func(x float64) float64 {
		r := f(x)
		if math.Abs(x) >= 1e-3 && math.Abs(r) < 1e-15*math.Max(1, math.Abs(x)) {
			return 0
		}
		return r
	}, func(x float64) string {
		if math.IsInf(x, 0) {
			return "argument is infinite"
		}
		return ""
	})
}

var functions map[string]function

func init() {
	functions = map[string]function{
		"sqrt": {1, 1, fnSqrt},
		"abs": {1, 1, func(a []Value) (Value, error) {
			if a[0].r != nil {
				return Value{r: new(big.Rat).Abs(a[0].r)}, nil
			}
			return inexact(math.Abs(a[0].f)), nil
		}},
		"ln": float1("ln", math.Log, positive),
		"log10": {1, 1, func(a []Value) (Value, error) {
			if a[0].sign() <= 0 {
				return Value{}, evalErr("log10: argument must be positive")
			}
			if a[0].r != nil {
				if k, ok := powerOfTen(a[0].r); ok {
					return intValue(int64(k)), nil
				}
			}
			return checkFloat(math.Log10(a[0].Float64()), "log10")
		}},
		"exp":   float1("exp", math.Exp, nil),
		"sin":   trig("sin", math.Sin),
		"cos":   trig("cos", math.Cos),
		"tan":   trig("tan", math.Tan),
		"min":   {1, -1, func(a []Value) (Value, error) { return pick(a, -1), nil }},
		"max":   {1, -1, func(a []Value) (Value, error) { return pick(a, 1), nil }},
		"floor": {1, 1, func(a []Value) (Value, error) { return integral(a[0], floorRat, math.Floor) }},
		"ceil":  {1, 1, func(a []Value) (Value, error) { return integral(a[0], ceilRat, math.Ceil) }},
		"round": {1, 2, fnRound},
	}
}

func positive(x float64) string {
	if x <= 0 {
		return "argument must be positive"
	}
	return ""
}

func fnSqrt(a []Value) (Value, error) {
	x := a[0]
	if x.sign() < 0 {
		return Value{}, evalErr("sqrt of a negative number is not a real number")
	}
	if x.r != nil {
		n, d := x.r.Num(), x.r.Denom()
		sn, sd := new(big.Int).Sqrt(n), new(big.Int).Sqrt(d)
		if new(big.Int).Mul(sn, sn).Cmp(n) == 0 && new(big.Int).Mul(sd, sd).Cmp(d) == 0 {
			return exact(new(big.Rat).SetFrac(sn, sd))
		}
	}
	return checkFloat(math.Sqrt(x.Float64()), "sqrt")
}

// powerOfTen reports whether r is 10^k for an integer k.
func powerOfTen(r *big.Rat) (int, bool) {
	s := r.Num()
	d := r.Denom()
	one := big.NewInt(1)
	ten := big.NewInt(10)
	count := func(x *big.Int) (int, bool) {
		k := 0
		x = new(big.Int).Set(x)
		m := new(big.Int)
		for x.Cmp(one) != 0 {
			var q *big.Int
			q, m = new(big.Int).QuoRem(x, ten, m)
			if m.Sign() != 0 {
				return 0, false
			}
			x = q
			k++
		}
		return k, true
	}
	switch {
	case d.Cmp(one) == 0:
		return count(s)
	case s.Cmp(one) == 0:
		k, ok := count(d)
		return -k, ok
	}
	return 0, false
}

// pick returns the smallest (dir < 0) or largest value.
func pick(a []Value, dir int) Value {
	best := a[0]
	for _, v := range a[1:] {
		var c int
		if best.r != nil && v.r != nil {
			c = v.r.Cmp(best.r)
		} else {
			switch x, y := v.Float64(), best.Float64(); {
			case x < y:
				c = -1
			case x > y:
				c = 1
			}
		}
		if c*dir > 0 {
			best = v
		}
	}
	return best
}

func integral(x Value, exactFn func(*big.Rat) *big.Rat, floatFn func(float64) float64) (Value, error) {
	if r := x.snapped(); r != nil {
		return exact(exactFn(r))
	}
	return checkFloat(floatFn(x.Float64()), "rounding")
}

func fnRound(a []Value) (Value, error) {
	x := a[0]
	if len(a) == 1 {
		return integral(x, roundRat, func(f float64) float64 { return math.Round(f) })
	}
	d := a[1]
	if !d.isInt() || !d.r.Num().IsInt64() || d.r.Num().Int64() < -100 || d.r.Num().Int64() > 100 {
		return Value{}, evalErr("round: digits must be an integer between -100 and 100")
	}
	r := x.snapped()
	if r == nil {
		return checkFloat(x.Float64(), "round")
	}
	digits := d.r.Num().Int64()
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(digits)), nil))
	if digits >= 0 {
		v := roundRat(new(big.Rat).Mul(r, scale))
		return exact(v.Quo(v, scale))
	}
	v := roundRat(new(big.Rat).Quo(r, scale))
	return exact(v.Mul(v, scale))
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
