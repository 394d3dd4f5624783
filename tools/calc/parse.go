// Package calc evaluates arithmetic expressions for the calculator tool: a
// small recursive-descent parser over exact rationals (math/big) with a
// float64 fallback for irrational functions.
//
// Grammar, loosest binding first:
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ ("^" | "**") unary ]      (right-associative)
//	primary = number | name | name "(" expr { "," expr } ")" | "(" expr ")"
//
// so -2^2 is -4, 2^3^2 is 512 and 2^-1 is 0.5. "×", "÷" and "−" are read
// as "*", "/" and "-". % is the floored modulo (its sign follows the
// divisor, as in Python). Names: pi, e; functions: sqrt, abs, ln, log10,
// exp, sin, cos, tan (radians), min, max (one or more arguments), round
// (round(x) or round(x, digits), half away from zero), floor, ceil.
package calc

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on the input.
const (
	MaxLength = 4096 // bytes of expression
	maxDepth  = 200  // nesting of parentheses, unary operators and powers
	// Literals with more digits or a larger exponent than these are read
	// as float64 instead of exactly.
	maxLiteralDigits = 1000
	maxLiteralExp    = 1000
)

// Error is an evaluation error. Pos is the 1-based character position the
// error refers to, 0 when it is about the value rather than a place.
type Error struct {
	Pos int
	Msg string
}

func (e *Error) Error() string {
	if e.Pos > 0 {
		return fmt.Sprintf("syntax error at position %d: %s", e.Pos, e.Msg)
	}
	return e.Msg
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tName
	tOp // + - * / % ^ ( ) ,
)

type token struct {
	kind tokKind
	text string // the operator ("**" becomes "^"), the name, the literal
	pos  int    // 1-based character position
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tNum:
		return "number " + t.text
	case tName:
		return fmt.Sprintf("name %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

func lex(s string) ([]token, error) {
	var toks []token
	pos := 1 // character position of s[i]
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		j := i + size // end of the token
		switch {
		case r == utf8.RuneError && size == 1:
			return nil, &Error{Pos: pos, Msg: "invalid UTF-8"}
		case unicode.IsSpace(r):
		case r >= '0' && r <= '9' || r == '.':
			j = i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					for k < len(s) && s[k] >= '0' && s[k] <= '9' {
						k++
					}
					j = k
				}
			}
			toks = append(toks, token{tNum, s[i:j], pos})
		case r == '_' || unicode.IsLetter(r):
			for j < len(s) {
				c, n := utf8.DecodeRuneInString(s[j:])
				if c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
					break
				}
				j += n
			}
			toks = append(toks, token{tName, strings.ToLower(s[i:j]), pos})
		default:
			op := ""
			switch r {
			case '+', '-', '/', '%', '^', '(', ')', ',':
				op = string(r)
			case '*':
				op = "*"
				if j < len(s) && s[j] == '*' {
					op = "^"
					j++
				}
			case '×', '·':
				op = "*"
			case '÷':
				op = "/"
			case '−':
				op = "-"
			default:
				return nil, &Error{Pos: pos, Msg: fmt.Sprintf("unexpected character %q", r)}
			}
			toks = append(toks, token{tOp, op, pos})
		}
		pos += utf8.RuneCountInString(s[i:j])
		i = j
	}
	return append(toks, token{kind: tEOF, pos: pos}), nil
}

// node is a parsed expression.
type node interface{ pos() int }

type (
	numNode struct {
		p int
		v Value
	}
	nameNode struct {
		p    int
		name string
	}
	unaryNode struct {
		p  int
		op string
		x  node
	}
	binNode struct {
		p    int
		op   string
		l, r node
	}
	callNode struct {
		p    int
		name string
		args []node
	}
)

func (n *numNode) pos() int   { return n.p }
func (n *nameNode) pos() int  { return n.p }
func (n *unaryNode) pos() int { return n.p }
func (n *binNode) pos() int   { return n.p }
func (n *callNode) pos() int  { return n.p }

type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}
func (p *parser) isOp(ops ...string) bool {
	t := p.peek()
	if t.kind != tOp {
		return false
	}
	for _, o := range ops {
		if t.text == o {
			return true
		}
	}
	return false
}

func (p *parser) enter(t token) error {
	p.depth++
	if p.depth > maxDepth {
		return &Error{Pos: t.pos, Msg: fmt.Sprintf("expression nested too deeply (more than %d levels)", maxDepth)}
	}
	return nil
}

func (p *parser) expr() (node, error) {
	l, err := p.term()
	if err != nil {
		return nil, err
	}
	for p.isOp("+", "-") {
		op := p.next()
		r, err := p.term()
		if err != nil {
			return nil, err
		}
		l = &binNode{op.pos, op.text, l, r}
	}
	return l, nil
}

func (p *parser) term() (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.isOp("*", "/", "%") {
		op := p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &binNode{op.pos, op.text, l, r}
	}
	return l, nil
}

func (p *parser) unary() (node, error) {
	if p.isOp("-", "+") {
		op := p.next()
		if err := p.enter(op); err != nil {
			return nil, err
		}
		x, err := p.unary()
		p.depth--
		if err != nil {
			return nil, err
		}
		return &unaryNode{op.pos, op.text, x}, nil
	}
	return p.power()
}

func (p *parser) power() (node, error) {
	base, err := p.primary()
	if err != nil {
		return nil, err
	}
	if !p.isOp("^") {
		return base, nil
	}
	op := p.next()
	if err := p.enter(op); err != nil {
		return nil, err
	}
	exp, err := p.unary()
	p.depth--
	if err != nil {
		return nil, err
	}
	return &binNode{op.pos, "^", base, exp}, nil
}

func (p *parser) primary() (node, error) {
	t := p.next()
	switch t.kind {
	case tNum:
		v, err := parseNumber(t)
		if err != nil {
			return nil, err
		}
		return &numNode{t.pos, v}, nil
	case tName:
		if !p.isOp("(") {
			return &nameNode{t.pos, t.text}, nil
		}
		open := p.next()
		if err := p.enter(open); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		call := &callNode{p: t.pos, name: t.text}
		if p.isOp(")") {
			p.next()
			return call, nil
		}
		for {
			a, err := p.expr()
			if err != nil {
				return nil, err
			}
			call.args = append(call.args, a)
			if p.isOp(",") {
				p.next()
				continue
			}
			if p.isOp(")") {
				p.next()
				return call, nil
			}
			u := p.peek()
			return nil, &Error{Pos: u.pos, Msg: fmt.Sprintf("expected ',' or ')' in call of %s, got %s", t.text, u.describe())}
		}
	case tOp:
		if t.text == "(" {
			if err := p.enter(t); err != nil {
				return nil, err
			}
			x, err := p.expr()
			p.depth--
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				u := p.peek()
				return nil, &Error{Pos: u.pos, Msg: fmt.Sprintf("expected ')' to close '(' at position %d, got %s", t.pos, u.describe())}
			}
			p.next()
			return x, nil
		}
	}
	return nil, &Error{Pos: t.pos, Msg: fmt.Sprintf("unexpected %s, expected a number, a name or '('", t.describe())}
}

// parseNumber reads a decimal literal exactly when it is of reasonable size.
func parseNumber(t token) (Value, error) {
	s := t.text
	mant, expPart, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if strings.Contains(frac, ".") || (intPart == "" && frac == "") {
		return Value{}, &Error{Pos: t.pos, Msg: fmt.Sprintf("malformed number %q", s)}
	}
	exp := 0
	if expPart != "" {
		n, ok := smallInt(expPart)
		if !ok {
			return parseFloatLiteral(t)
		}
		exp = n
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return intValue(0), nil
	}
	exp -= len(frac)
	if len(digits) > maxLiteralDigits || exp > maxLiteralExp || exp < -maxLiteralExp {
		return parseFloatLiteral(t)
	}
	n, _ := new(big.Int).SetString(digits, 10)
	r := new(big.Rat).SetInt(n)
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
	if exp >= 0 {
		r.Mul(r, new(big.Rat).SetInt(pow))
	} else {
		r.Quo(r, new(big.Rat).SetInt(pow))
	}
	return exact(r)
}

func parseFloatLiteral(t token) (Value, error) {
	f, err := strconv.ParseFloat(t.text, 64)
	if errors.Is(err, strconv.ErrRange) && f == 0 {
		return inexact(0), nil // underflow: as good as zero
	}
	if err != nil || math.IsInf(f, 0) {
		return Value{}, &Error{Pos: t.pos, Msg: fmt.Sprintf("number %s is out of range", t.text)}
	}
	return inexact(f), nil
}

// smallInt parses an optionally signed decimal exponent of at most 6 digits.
func smallInt(s string) (int, bool) {
	neg := false
	switch {
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	case strings.HasPrefix(s, "-"):
		s, neg = s[1:], true
	}
	s = strings.TrimLeft(s, "0")
	if len(s) > 6 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
