package grammar

// frame is one level of the recognizer's stack: a node and where in it
// the output is. Its fields are the whole state: two stacks with equal
// frames accept the same continuations (the mask cache's key).
type frame struct {
	node int32
	st   uint8  // local state, per kind
	ws   uint8  // whitespace written since the last token of JSON
	sub  uint8  // string: UTF-8 bytes or \u digits still expected
	pos  uint16 // literal, object key: bytes matched; string: a UTF-8 lead byte
	cand uint64 // literal, object key: candidates still matching
	seen uint64 // object: properties written; array: items written (capped)
	cur  int16  // object: the property whose value comes next
}

// String states.
const (
	strStart  = iota // before the opening quote
	strBody          // in the string
	strEscape        // after a backslash
	strHex           // in \uXXXX (sub: digits left)
	strUTF8          // in a multi-byte character (sub: bytes left)
)

// Object states.
const (
	objStart    = iota // before '{'
	objOpen            // after '{'
	objKey             // in a declared key (pos, cand)
	objAfterKey        // after the key, before ':'
	objColon           // after ':', before the value
	objValue           // after a value
	objComma           // after ','
)

// Array states.
const (
	arrStart = iota
	arrOpen
	arrValue
	arrComma
)

func isWS(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isHex(b byte) bool { return isDigit(b) || (b|0x20) >= 'a' && (b|0x20) <= 'f' }

// step advances the stack by one byte of output; false if the byte cannot
// continue a valid document (the stack is then unusable).
func (g *Grammar) step(stk []frame, b byte) ([]frame, bool) {
	for {
		if len(stk) == 0 {
			return stk, false
		}
		top := len(stk) - 1
		f := &stk[top]
		n := &g.nodes[f.node]
		switch n.kind {
		case kRoot:
			if f.st != 0 {
				// After the document only whitespace (a template's
				// newline before its closing marker).
				if !isWS(b) || f.ws >= MaxWhitespace {
					return stk, false
				}
				f.ws++
				return stk, true
			}
			if isWS(b) {
				if f.ws >= MaxWhitespace {
					return stk, false
				}
				f.ws++
				return stk, true
			}
			f.st, f.ws = 1, 0
			stk = append(stk, frame{node: n.child})
			continue
		case kAny:
			switch {
			case b == '{':
				f.node = g.any.obj
			case b == '[':
				if len(stk) > MaxDepth {
					return stk, false
				}
				f.node = g.any.arr
			case b == '"':
				f.node = g.any.str
			case b == '-' || isDigit(b):
				f.node = g.any.num
			case b == 't' || b == 'f' || b == 'n':
				f.node = g.any.lit
			default:
				return stk, false
			}
			continue
		case kUnion:
			if len(n.alts) == 1 {
				f.node = n.alts[0]
				continue
			}
			picked := false
			for _, a := range n.alts {
				if g.nodes[a].first[b] {
					f.node, picked = a, true
					break
				}
			}
			if !picked {
				return stk, false
			}
			continue
		case kString:
			if f.st == strBody && b == '"' {
				// The parent's state was set at the push.
				return stk[:top], f.seen >= uint64(n.minLen)
			}
			if f.st == strBody && (b < 0x80 || b >= 0xC0) {
				// A character starts: count it, up to the bounds.
				if n.maxLen >= 0 && f.seen >= uint64(n.maxLen) {
					return stk, false
				}
				if f.seen < uint64(max(n.minLen, n.maxLen)) {
					f.seen++
				}
			}
			return stk, stepString(f, b)
		case kNumber, kInteger:
			next, ok, end := stepNumber(f.st, b, n.kind == kInteger)
			if ok {
				f.st = next
				return stk, true
			}
			if !end {
				return stk, false
			}
			stk = stk[:top] // the number ended before b: b goes to the parent
			continue
		case kLiteral:
			var cand uint64
			if f.st == 0 {
				f.st, f.cand = 1, 1<<len(n.lits)-1
			}
			complete := false
			for j, l := range n.lits {
				if f.cand&(1<<j) == 0 {
					continue
				}
				if int(f.pos) < len(l) && l[f.pos] == b {
					cand |= 1 << j
				} else if int(f.pos) == len(l) {
					complete = true
				}
			}
			if cand != 0 {
				f.cand = cand
				f.pos++
				return stk, true
			}
			if !complete {
				return stk, false
			}
			stk = stk[:top]
			continue
		case kObject:
			return g.stepObject(stk, b)
		case kArray:
			return g.stepArray(stk, b)
		case kCall:
			return g.stepCall(stk, b)
		}
		return stk, false
	}
}

// whitespace takes a whitespace byte between tokens of JSON.
func whitespace(f *frame) bool {
	if f.ws >= MaxWhitespace {
		return false
	}
	f.ws++
	return true
}

func stepString(f *frame, b byte) bool {
	switch f.st {
	case strStart:
		if b != '"' {
			return false
		}
		f.st = strBody
		return true
	case strBody:
		switch {
		case b == '\\':
			f.st = strEscape
		case b < 0x20:
			return false
		case b < 0x80:
		case b >= 0xC2 && b <= 0xDF:
			f.st, f.sub = strUTF8, 1
		case b >= 0xE0 && b <= 0xEF:
			f.st, f.sub, f.pos = strUTF8, 2, uint16(b)
		case b >= 0xF0 && b <= 0xF4:
			f.st, f.sub, f.pos = strUTF8, 3, uint16(b)
		default:
			return false
		}
		return true
	case strEscape:
		switch b {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			f.st = strBody
		case 'u':
			f.st, f.sub = strHex, 4
		default:
			return false
		}
		return true
	case strHex:
		if !isHex(b) {
			return false
		}
		if f.sub--; f.sub == 0 {
			f.st = strBody
		}
		return true
	case strUTF8:
		lo, hi := continuation(byte(f.pos))
		if b < lo || b > hi {
			return false
		}
		f.pos = 0 // the lead byte narrows only the first continuation byte
		if f.sub--; f.sub == 0 {
			f.st = strBody
		}
		return true
	}
	return false
}

// continuation is the range of the byte after a UTF-8 lead byte (0: any
// continuation byte): no overlong forms, no surrogates, nothing above
// U+10FFFF (RFC 3629).
func continuation(lead byte) (lo, hi byte) {
	switch lead {
	case 0xE0:
		return 0xA0, 0xBF
	case 0xED:
		return 0x80, 0x9F
	case 0xF0:
		return 0x90, 0xBF
	case 0xF4:
		return 0x80, 0x8F
	}
	return 0x80, 0xBF
}

// Number states: 0 start, 1 after '-', 2 after a leading 0, 3 in the
// integer digits, 4 after '.', 5 in the fraction, 6 after 'e', 7 after the
// exponent's sign, 8 in the exponent. 2, 3, 5 and 8 may end.
func stepNumber(st uint8, b byte, integer bool) (next uint8, ok, end bool) {
	switch st {
	case 0, 1:
		switch {
		case b == '-' && st == 0:
			return 1, true, false
		case b == '0':
			return 2, true, false
		case b >= '1' && b <= '9':
			return 3, true, false
		}
		return 0, false, false
	case 2, 3:
		switch {
		case isDigit(b) && st == 3:
			return 3, true, false
		case b == '.' && !integer:
			return 4, true, false
		case (b == 'e' || b == 'E') && !integer:
			return 6, true, false
		}
		return 0, false, true
	case 4, 5:
		if isDigit(b) {
			return 5, true, false
		}
		if st == 5 && (b == 'e' || b == 'E') {
			return 6, true, false
		}
		return 0, false, st == 5
	case 6, 7:
		if isDigit(b) {
			return 8, true, false
		}
		if st == 6 && (b == '+' || b == '-') {
			return 7, true, false
		}
		return 0, false, false
	case 8:
		if isDigit(b) {
			return 8, true, false
		}
		return 0, false, true
	}
	return 0, false, false
}

func (g *Grammar) stepObject(stk []frame, b byte) ([]frame, bool) {
	top := len(stk) - 1
	f := &stk[top]
	n := &g.nodes[f.node]
	all := uint64(1)<<len(n.keys) - 1
	switch f.st {
	case objStart:
		if b != '{' || len(stk) > MaxDepth {
			return stk, false
		}
		f.st = objOpen
		return stk, true
	case objOpen, objComma:
		if isWS(b) {
			return stk, whitespace(f)
		}
		if b == '}' && f.st == objOpen {
			return stk[:top], n.required == 0
		}
		if b != '"' {
			return stk, false
		}
		f.ws = 0
		if n.free {
			f.st = objAfterKey
			return append(stk, frame{node: g.any.str, st: strBody}), true
		}
		f.cand = all &^ f.seen
		if f.cand == 0 {
			return stk, false
		}
		f.st, f.pos = objKey, 1
		return stk, true
	case objKey:
		var cand uint64
		for j, k := range n.keys {
			if f.cand&(1<<j) != 0 && int(f.pos) < len(k) && k[f.pos] == b {
				cand |= 1 << j
			}
		}
		if cand == 0 {
			return stk, false
		}
		f.cand = cand
		f.pos++
		for j, k := range n.keys {
			if cand&(1<<j) != 0 && int(f.pos) == len(k) {
				// Keys end with their quote: a complete key is no other's
				// prefix.
				f.st, f.cur, f.cand, f.pos = objAfterKey, int16(j), 0, 0
			}
		}
		return stk, true
	case objAfterKey:
		if isWS(b) {
			return stk, whitespace(f)
		}
		if b != ':' {
			return stk, false
		}
		f.st, f.ws = objColon, 0
		return stk, true
	case objColon:
		if isWS(b) {
			return stk, whitespace(f)
		}
		f.st, f.ws = objValue, 0
		child := n.values
		if !n.free {
			f.seen |= 1 << f.cur
			child = n.props[f.cur]
			f.cur = 0
		}
		return g.step(append(stk, frame{node: child}), b)
	case objValue:
		if isWS(b) {
			return stk, whitespace(f)
		}
		switch b {
		case ',':
			if !n.free && f.seen == all {
				return stk, false
			}
			f.st, f.ws = objComma, 0
			return stk, true
		case '}':
			return stk[:top], n.required&^f.seen == 0
		}
	}
	return stk, false
}

func (g *Grammar) stepArray(stk []frame, b byte) ([]frame, bool) {
	top := len(stk) - 1
	f := &stk[top]
	n := &g.nodes[f.node]
	switch f.st {
	case arrStart:
		if b != '[' || len(stk) > MaxDepth {
			return stk, false
		}
		f.st = arrOpen
		return stk, true
	case arrOpen, arrComma:
		if isWS(b) {
			return stk, whitespace(f)
		}
		if b == ']' && f.st == arrOpen {
			return stk[:top], n.minItems == 0
		}
		f.st, f.ws = arrValue, 0
		if limit := uint64(max(n.minItems, n.maxItems)); f.seen < limit {
			f.seen++
		}
		return g.step(append(stk, frame{node: n.items}), b)
	case arrValue:
		if isWS(b) {
			return stk, whitespace(f)
		}
		switch b {
		case ',':
			if n.maxItems >= 0 && f.seen >= uint64(n.maxItems) {
				return stk, false
			}
			f.st, f.ws = arrComma, 0
			return stk, true
		case ']':
			return stk[:top], f.seen >= uint64(n.minItems)
		}
	}
	return stk, false
}

// canEnd reports whether the output may end here: every open frame is a
// number or literal that may end, under a finished root.
func (g *Grammar) canEnd(stk []frame) bool {
	for i := len(stk) - 1; i >= 0; i-- {
		f := &stk[i]
		n := &g.nodes[f.node]
		switch n.kind {
		case kRoot:
			return i == 0 && f.st == 1
		case kNumber, kInteger:
			if f.st != 2 && f.st != 3 && f.st != 5 && f.st != 8 {
				return false
			}
		case kLiteral:
			ok := false
			for j, l := range n.lits {
				ok = ok || (f.st == 1 && f.cand&(1<<j) != 0 && int(f.pos) == len(l))
			}
			if !ok {
				return false
			}
		default:
			return false
		}
	}
	return false
}
