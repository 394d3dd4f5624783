package calc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCalculate(t *testing.T) {
	cases := []struct{ in, want string }{
		{"1+2", "3"},
		{"0.1+0.2", "0.3"},
		{"2+3*4", "14"},
		{"(2+3)*4", "20"},
		{"10-4-3", "3"},
		{"100/10/5", "2"},
		{"2^3^2", "512"},
		{"(2^3)^2", "64"},
		{"2**10", "1024"},
		{"-2^2", "-4"},
		{"(-2)^2", "4"},
		{"2^-1", "0.5"},
		{"-3--3", "0"},
		{"+5", "5"},
		{"7%3", "1"},
		{"-7%3", "2"},
		{"7%-3", "-2"},
		{"7.5%2", "1.5"},
		{"1/3", "0.333333333333333"},
		{"2/3", "0.666666666666667"},
		{"1/8", "0.125"},
		{"10/4", "2.5"},
		{"2^100", "1267650600228229401496703205376"},
		{"99999999999999999999*99999999999999999999", "9999999999999999999800000000000000000001"},
		{"12345678901234567890+1", "12345678901234567891"},
		{"sqrt(16)", "4"},
		{"sqrt(2)", "1.4142135623731"},
		{"sqrt(1/4)", "0.5"},
		{"sqrt(2)*sqrt(2)", "2"},
		{"abs(-3.5)", "3.5"},
		{"ln(e)", "1"},
		{"ln(1)", "0"},
		{"log10(1000)", "3"},
		{"log10(0.01)", "-2"},
		{"exp(0)", "1"},
		{"sin(0)", "0"},
		{"sin(pi)", "0"},
		{"cos(pi)", "-1"},
		{"cos(pi/2)", "0"},
		{"sin(pi/6)", "0.5"},
		{"tan(pi/4)", "1"},
		{"min(3, 1, 2)", "1"},
		{"max(3, 1.5, 2)", "3"},
		{"max(pi, 3)", "3.14159265358979"},
		{"round(2.5)", "3"},
		{"round(-2.5)", "-3"},
		{"round(2.675, 2)", "2.68"},
		{"round(1234, -2)", "1200"},
		{"round(pi, 4)", "3.1416"},
		{"floor(-1.5)", "-2"},
		{"ceil(-1.5)", "-1"},
		{"floor(0.1*3*10)", "3"},
		{"ceil(2)", "2"},
		{"pi", "3.14159265358979"},
		{"e", "2.71828182845905"},
		{"2*PI", "6.28318530717959"},
		{"1e3", "1000"},
		{"1.5e-3", "0.0015"},
		{".5+.5", "1"},
		{"3 × 4 ÷ 2 − 1", "5"},
		{"2+2=", "4"},
		{"  ( ( 1 ) ) ", "1"},
		{"1e-400", "1e-400"},
		{"1e-9999", "0"},
		{"2^0.5", "1.4142135623731"},
		{"4^0.5", "2"},
		{"0^0", "1"},
		{"(-1)^1001", "-1"},
		{"1e20", "100000000000000000000"},
		{"1e20+0.5", "100000000000000000000.5"},
		{"exp(100)", "2.68811714181614e+43"},
		{"1/1024", "0.0009765625"},
	}
	for _, c := range cases {
		got, err := Calculate(c.in)
		if err != nil {
			t.Errorf("Calculate(%q): unexpected error %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Calculate(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCalculateErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"1/0", "division by zero"},
		{"1/(2-2)", "division by zero"},
		{"5%0", "modulo by zero"},
		{"0^-1", "division by zero"},
		{"1/(1-1.0)", "division by zero"},
		{"", "empty expression"},
		{"1+", "syntax error at position 3: unexpected end of expression"},
		{"(1+2", "syntax error at position 5: expected ')'"},
		{"1+2)", "syntax error at position 4: unmatched ')'"},
		{"2 3", "missing operator"},
		{"2x", "missing operator"},
		{"1 $ 2", "unexpected character '$'"},
		{"foo(1)", `unknown function "foo"`},
		{"log(10)", "log is ambiguous"},
		{"x+1", `unknown name "x"`},
		{"sqrt", "sqrt is a function"},
		{"sqrt(-1)", "not a real number"},
		{"ln(0)", "ln: argument must be positive"},
		{"log10(-1)", "log10: argument must be positive"},
		{"sqrt(1,2)", "sqrt expects 1 argument, got 2"},
		{"min()", "min expects at least 1 argument(s), got 0"},
		{"(-8)^(1/3)", "fractional power"},
		{"2^10000", "overflows"},
		{"9^9^9", "overflows"},
		{"exp(1000)", "overflows"},
		{"1e999999999", "out of range"},
		{"1.2.3", "malformed number"},
		{"round(1, 0.5)", "digits must be an integer"},
		{"1/0 + )", "syntax error"}, // syntax first
		{strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300), "nested too deeply"},
		{strings.Repeat("-", 300) + "1", "nested too deeply"},
		{strings.Repeat("1+", 3000) + "1", "too long"},
		{"1 + \xff", "invalid UTF-8"},
	}
	for _, c := range cases {
		got, err := Calculate(c.in)
		if err == nil {
			t.Errorf("Calculate(%q) = %q, want error containing %q", c.in, got, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Calculate(%q) error = %q, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestExactness(t *testing.T) {
	v, err := Eval("1/3*3")
	if err != nil || !v.Exact() || v.String() != "1" {
		t.Fatalf("1/3*3 = %v (exact %v), %v", v, v.Exact(), err)
	}
	v, err = Eval("sqrt(2)")
	if err != nil || v.Exact() {
		t.Fatalf("sqrt(2) should be inexact: %v %v", v, err)
	}
}

func FuzzCalculator(f *testing.F) {
	for _, s := range []string{
		"1+2*3", "2^3^2", "-(-(1))", "sqrt(2)", "max(1,2,3)", "round(2.675, 2)",
		"1/0", "((((", "9^9^9", "1e999", "2**-3", "pi*e", "7%-3", "floor(-0.5)",
		"1e-400", "0^0", "log10(1e300)", "tan(pi/2)", "sin(1e300)", "round(1e300, 100)",
		"123456789012345678901234567890/7", "×÷−", "π", "1.", ".", "e1", "1e", "1e+",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Eval(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("empty error for %q", s)
			}
			return
		}
		out := v.String()
		if out == "" || !utf8.ValidString(out) {
			t.Fatalf("bad output %q for %q", out, s)
		}
		if out == "NaN" || strings.Contains(out, "Infinity") {
			t.Fatalf("non-finite result %q for %q", out, s)
		}
	})
}

func TestHugeExact(t *testing.T) {
	for in, want := range map[string]string{
		"1e700/7":   "1.42857142857143e+699",
		"1/(3e700)": "3.33333333333333e-701",
		"1e700/8":   "125" + strings.Repeat("0", 697),
	} {
		got, err := Calculate(in)
		if err != nil || got != want {
			t.Errorf("Calculate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
