package tools

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/pitstop-llm/pitstop/tools/calc"
)

type unitConvertArgs struct {
	Value float64 `json:"value" jsonschema:"description=The quantity to convert"`
	From  string  `json:"from" jsonschema:"description=Unit of value\\, e.g. km\\, mi\\, lb\\, kg\\, C\\, F\\, h,minLength=1"`
	To    string  `json:"to" jsonschema:"description=Unit to convert to,minLength=1"`
}

// unitDef converts to its dimension's base unit: base = (x + offset) * factor.
type unitDef struct {
	symbol string
	dim    string
	factor *big.Rat
	offset *big.Rat
}

var (
	units     = map[string]*unitDef{}
	unitOrder = map[string][]string{}
	dims      = []string{"length", "mass", "temperature", "time"}
)

func defUnit(dim, symbol, factor, offset string, aliases ...string) {
	f, ok := new(big.Rat).SetString(factor)
	o, ok2 := new(big.Rat).SetString(offset)
	if !ok || !ok2 {
		panic("bad unit constant for " + symbol)
	}
	u := &unitDef{symbol: symbol, dim: dim, factor: f, offset: o}
	for _, a := range append([]string{symbol}, aliases...) {
		k := normUnit(a)
		if _, dup := units[k]; dup {
			panic("duplicate unit alias " + a)
		}
		units[k] = u
	}
	unitOrder[dim] = append(unitOrder[dim], symbol)
}

func init() {
	// Length, base metre. Exact by definition (international yard and pound, 1959).
	defUnit("length", "m", "1", "0", "meter", "meters", "metre", "metres")
	defUnit("length", "km", "1000", "0", "kilometer", "kilometers", "kilometre", "kilometres")
	defUnit("length", "cm", "1/100", "0", "centimeter", "centimeters", "centimetre", "centimetres")
	defUnit("length", "mm", "1/1000", "0", "millimeter", "millimeters", "millimetre", "millimetres")
	defUnit("length", "µm", "1/1000000", "0", "um", "micrometer", "micrometers", "micron", "microns")
	defUnit("length", "nm", "1/1000000000", "0", "nanometer", "nanometers")
	defUnit("length", "in", "0.0254", "0", "inch", "inches")
	defUnit("length", "ft", "0.3048", "0", "foot", "feet")
	defUnit("length", "yd", "0.9144", "0", "yard", "yards")
	defUnit("length", "mi", "1609.344", "0", "mile", "miles")
	defUnit("length", "nmi", "1852", "0", "nautical mile", "nautical miles")
	// Mass, base kilogram.
	defUnit("mass", "kg", "1", "0", "kilogram", "kilograms", "kilo", "kilos")
	defUnit("mass", "g", "1/1000", "0", "gram", "grams", "gramme", "grammes")
	defUnit("mass", "mg", "1/1000000", "0", "milligram", "milligrams")
	defUnit("mass", "µg", "1/1000000000", "0", "ug", "mcg", "microgram", "micrograms")
	defUnit("mass", "t", "1000", "0", "tonne", "tonnes", "metric ton", "metric tons")
	defUnit("mass", "lb", "0.45359237", "0", "lbs", "pound", "pounds")
	defUnit("mass", "oz", "0.028349523125", "0", "ounce", "ounces")
	defUnit("mass", "st", "6.35029318", "0", "stone", "stones")
	// Temperature, base kelvin.
	defUnit("temperature", "°C", "1", "273.15", "celsius", "degc", "centigrade")
	defUnit("temperature", "°F", "5/9", "459.67", "fahrenheit", "degf")
	defUnit("temperature", "K", "1", "0", "kelvin", "kelvins")
	defUnit("temperature", "°R", "5/9", "0", "rankine")
	// Time, base second. A year is the Julian year, 365.25 days.
	defUnit("time", "ns", "1/1000000000", "0", "nanosecond", "nanoseconds")
	defUnit("time", "µs", "1/1000000", "0", "us", "microsecond", "microseconds")
	defUnit("time", "ms", "1/1000", "0", "millisecond", "milliseconds")
	defUnit("time", "s", "1", "0", "sec", "secs", "second", "seconds")
	defUnit("time", "min", "60", "0", "mins", "minute", "minutes")
	defUnit("time", "h", "3600", "0", "hr", "hrs", "hour", "hours")
	defUnit("time", "d", "86400", "0", "day", "days")
	defUnit("time", "wk", "604800", "0", "week", "weeks")
	defUnit("time", "yr", "31557600", "0", "year", "years")
}

// normUnit makes a unit name a lookup key: lower case, no spaces, no degree
// sign before C/F/R, "μ" (Greek mu) as "µ" (micro sign).
func normUnit(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = strings.ReplaceAll(s, "μ", "µ")
	if t, ok := strings.CutPrefix(s, "°"); ok {
		s = t
		if s == "k" { // "°K" is common, if wrong
			return "k"
		}
	}
	if t, ok := strings.CutPrefix(s, "degrees "); ok {
		s = t
	}
	return s
}

func knownUnits() string {
	var parts []string
	for _, d := range dims {
		parts = append(parts, d+": "+strings.Join(unitOrder[d], ", "))
	}
	return strings.Join(parts, "; ")
}

func lookupUnit(name string) (*unitDef, error) {
	u, ok := units[normUnit(name)]
	if !ok {
		return nil, fmt.Errorf("unknown unit %q; known units: %s", name, knownUnits())
	}
	return u, nil
}

// ConvertUnits converts value between two units of the same dimension
// (length, mass, temperature, time) exactly, and returns the result as a
// rational.
func ConvertUnits(value float64, from, to string) (*big.Rat, error) {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return nil, fmt.Errorf("value must be a finite number")
	}
	fu, err := lookupUnit(from)
	if err != nil {
		return nil, err
	}
	tu, err := lookupUnit(to)
	if err != nil {
		return nil, err
	}
	if fu.dim != tu.dim {
		return nil, fmt.Errorf("cannot convert %s (%s) to %s (%s)", fu.symbol, fu.dim, tu.symbol, tu.dim)
	}
	// The decimal the model wrote, not the binary float nearest to it.
	x, ok := new(big.Rat).SetString(strconv.FormatFloat(value, 'g', -1, 64))
	if !ok {
		return nil, fmt.Errorf("value %v is not a number", value)
	}
	base := new(big.Rat).Add(x, fu.offset)
	base.Mul(base, fu.factor)
	if fu.dim == "temperature" && base.Sign() < 0 {
		return nil, fmt.Errorf("%s %s is below absolute zero", calc.FormatFloat(value), fu.symbol)
	}
	out := new(big.Rat).Quo(base, tu.factor)
	return out.Sub(out, tu.offset), nil
}

// NewUnitConvertTool returns the unit_convert tool.
func NewUnitConvertTool() (*Tool, error) {
	return Func(UnitConvertTool,
		"Convert a quantity between units of length, mass, temperature or time. Units: "+knownUnits()+".",
		func(_ context.Context, a unitConvertArgs) (string, error) {
			r, err := ConvertUnits(a.Value, a.From, a.To)
			if err != nil {
				return "", err
			}
			fu, _ := lookupUnit(a.From)
			tu, _ := lookupUnit(a.To)
			return fmt.Sprintf("%s %s = %s %s", calc.FormatFloat(a.Value), fu.symbol, calc.FormatRat(r), tu.symbol), nil
		})
}
