package grammar

import "math/bits"

// Closing within a token budget: from any state the recognizer knows a
// number of tokens that surely complete a valid document (Cost), and
// MaskWithin keeps only the tokens after which the rest still fits the
// budget. The cost is the length of one completion the vocabulary can
// write: fixed text (a property's key and its colon, an enum value, a
// tool call's prefix) in the fewest tokens that spell it (a shortest path
// over the vocabulary's trie, per text and position), everything else one
// token per byte (every byte of a byte-level vocabulary is a token). The
// first token of that completion lowers the cost by at least one, so a
// decoder that asks for MaskWithin(left-1-k), with left the tokens it may
// still write and k the tokens after the document (the end token, a tool
// call's close marker), always finishes: strings end, arrays and objects
// close, required properties get their shortest values.

// unreachable is the cost of a state from which no document can be
// completed (a required recursion without end).
const unreachable = 1 << 30

func satAdd(a, b int) int { return min(a+b, unreachable) }

// costs are a grammar's completion costs over a vocabulary: mb is, per
// node, the cost of its shortest value; lit, per fixed text, the fewest
// tokens that spell it from each position.
type costs struct {
	g  *Grammar
	mb []int
	// keyTok[node][j] and litTok[node][j] are, per byte position, the
	// fewest tokens that write key j with its colon, and literal j.
	keyTok, litTok [][][]int
}

func newCosts(g *Grammar, v *Vocab) *costs {
	k := &costs{g: g, keyTok: make([][][]int, len(g.nodes)), litTok: make([][][]int, len(g.nodes))}
	spelled := map[string][]int{}
	for i := range g.nodes {
		n := &g.nodes[i]
		for _, key := range n.keys {
			k.keyTok[i] = append(k.keyTok[i], spell(v, key+":", spelled))
		}
		for _, l := range n.lits {
			k.litTok[i] = append(k.litTok[i], spell(v, l, spelled))
		}
	}
	k.mb = k.minBytes()
	return k
}

// spell is the fewest tokens that write text[p:], for every p (a shortest
// path over the vocabulary's trie), memoized in seen.
func spell(v *Vocab, text string, seen map[string][]int) []int {
	if best, ok := seen[text]; ok {
		return best
	}
	best := make([]int, len(text)+1)
	for p := len(text) - 1; p >= 0; p-- {
		best[p] = unreachable
		node := int32(0)
		for q := p; q < len(text); q++ {
			next := int32(-1)
			for e := v.first[node]; e < v.first[node+1]; e++ {
				if v.edgeByte[e] == text[q] {
					next = v.edgeNode[e]
					break
				}
			}
			if next < 0 {
				break
			}
			node = next
			if v.tokAt[node] < v.tokAt[node+1] {
				best[p] = min(best[p], satAdd(best[q+1], 1))
			}
		}
	}
	seen[text] = best
	return best
}

// at is spelled[pos] (the text's length past its end: 0).
func at(spelled []int, pos int) int {
	if pos >= 0 && pos < len(spelled) {
		return spelled[pos]
	}
	return 0
}

// minBytes is, per node, the cost of the shortest value it recognizes (a
// fixpoint, for recursive references).
func (k *costs) minBytes() []int {
	g := k.g
	mb := make([]int, len(g.nodes))
	for i := range mb {
		mb[i] = unreachable
	}
	for changed := true; changed; {
		changed = false
		for i := range g.nodes {
			if v := k.shortest(int32(i), mb); v < mb[i] {
				mb[i], changed = v, true
			}
		}
	}
	return mb
}

func (k *costs) shortest(i int32, mb []int) int {
	n := &k.g.nodes[i]
	switch n.kind {
	case kRoot:
		return mb[n.child]
	case kAny, kNumber, kInteger:
		return 1 // 0
	case kString:
		return 2 + n.minLen
	case kLiteral:
		best := unreachable
		for j := range n.lits {
			best = min(best, at(k.litTok[i][j], 0))
		}
		return best
	case kUnion:
		best := unreachable
		for _, a := range n.alts {
			best = min(best, mb[a])
		}
		return best
	case kObject:
		if n.free || n.required == 0 {
			return 2 // {}
		}
		return satAdd(1, k.props(i, n.required, mb)) // { props }
	case kArray:
		if n.minItems == 0 {
			return 2
		}
		return satAdd(n.minItems+1, mb[n.items]*n.minItems) // [ items with commas ]
	case kCall:
		best := unreachable
		for j := range n.lits {
			best = min(best, satAdd(at(k.litTok[i][j], 0)+1, mb[n.alts[j]]))
		}
		return best
	}
	return unreachable
}

// props is the cost of the properties in set written with commas between
// them, plus one (the closing brace or the comma before them).
func (k *costs) props(i int32, set uint64, mb []int) int {
	n := &k.g.nodes[i]
	total := 0
	for s := set; s != 0; s &= s - 1 {
		j := bits.TrailingZeros64(s)
		total = satAdd(total, satAdd(at(k.keyTok[i][j], 0)+1, mb[n.props[j]])) // key: value,
	}
	return total
}

// rest is what an object still needs after a value: the required
// properties not written, each after a comma, and the closing brace.
func (k *costs) rest(i int32, left uint64, mb []int) int {
	return satAdd(1, k.props(i, left, mb))
}

// cost is the cost of completing a document from stk.
func (k *costs) cost(stk []frame) int {
	total := 0
	for i := len(stk) - 1; i >= 0; i-- {
		total = satAdd(total, k.remaining(&stk[i], k.mb))
	}
	return total
}

// remaining is what a frame needs to complete its value once the frames
// above it have completed theirs.
func (k *costs) remaining(f *frame, mb []int) int {
	n := &k.g.nodes[f.node]
	switch n.kind {
	case kRoot:
		if f.st == 0 {
			return mb[n.child]
		}
		return 0
	case kAny, kUnion:
		return mb[f.node]
	case kString:
		chars := max(n.minLen-int(f.seen), 0) + 1 // characters still needed, then the quote
		switch f.st {
		case strStart:
			return 2 + n.minLen
		case strEscape:
			return 1 + chars
		case strHex, strUTF8:
			return int(f.sub) + chars
		}
		return chars
	case kNumber, kInteger:
		switch f.st {
		case 2, 3, 5, 8:
			return 0
		}
		return 1
	case kLiteral:
		if f.st == 0 {
			return mb[f.node]
		}
		best := unreachable
		for j := range n.lits {
			if f.cand&(1<<j) != 0 {
				best = min(best, at(k.litTok[f.node][j], int(f.pos)))
			}
		}
		return best
	case kObject:
		return k.remainingObject(f, n, mb)
	case kArray:
		mi := mb[n.items]
		need := max(n.minItems-int(f.seen), 0)
		switch f.st {
		case arrStart:
			return mb[f.node]
		case arrOpen:
			if n.minItems == 0 {
				return 1
			}
			return satAdd(n.minItems, mi*n.minItems)
		case arrValue:
			return satAdd(1, (mi+1)*need)
		case arrComma:
			items := max(need, 1)
			return satAdd(items, mi*items)
		}
	case kCall:
		switch f.st {
		case 0:
			return mb[f.node]
		case 1:
			best := unreachable
			for j := range n.lits {
				if f.cand&(1<<j) != 0 {
					best = min(best, satAdd(at(k.litTok[f.node][j], int(f.pos))+1, mb[n.alts[j]]))
				}
			}
			return best
		}
		return 1 // }
	}
	return unreachable
}

func (k *costs) remainingObject(f *frame, n *node, mb []int) int {
	if f.st == objStart {
		return mb[f.node]
	}
	if n.free {
		switch f.st {
		case objAfterKey:
			return satAdd(2, mb[n.values]) // : value }
		case objColon:
			return satAdd(1, mb[n.values])
		case objComma:
			return satAdd(4, mb[n.values]) // "" : value }
		}
		return 1 // }
	}
	left := n.required &^ f.seen
	switch f.st {
	case objOpen, objComma:
		if left == 0 {
			if f.st == objOpen {
				return 1
			}
			// After a comma a property must come: the cheapest unwritten.
			best := unreachable
			all := uint64(1)<<len(n.keys) - 1
			for s := all &^ f.seen; s != 0; s &= s - 1 {
				j := bits.TrailingZeros64(s)
				best = min(best, satAdd(at(k.keyTok[f.node][j], 0)+1, mb[n.props[j]]))
			}
			return best
		}
		return k.props(f.node, left, mb) // the last comma's byte is the brace
	case objKey:
		best := unreachable
		for s := f.cand; s != 0; s &= s - 1 {
			j := bits.TrailingZeros64(s)
			v := satAdd(at(k.keyTok[f.node][j], int(f.pos)), mb[n.props[j]])
			best = min(best, satAdd(v, k.rest(f.node, left&^(1<<j), mb)))
		}
		return best
	case objAfterKey, objColon:
		v := satAdd(mb[n.props[f.cur]], k.rest(f.node, left&^(1<<f.cur), mb))
		if f.st == objAfterKey {
			v = satAdd(v, 1)
		}
		return v
	}
	return k.rest(f.node, left, mb) // objValue
}

// stepBound bounds how much one byte can raise the cost: entering an
// optional property, another array item, a longer literal or branch, an
// escape. unreachable when some node has no finite value.
func (k *costs) stepBound() int {
	g, mb := k.g, k.mb
	longest, worst := 0, 0
	for i := range g.nodes {
		n := &g.nodes[i]
		if mb[i] >= unreachable {
			return unreachable
		}
		worst = max(worst, mb[i])
		for _, k := range n.keys {
			longest = max(longest, len(k))
		}
		for _, l := range n.lits {
			longest = max(longest, len(l))
		}
	}
	return 8 + longest + 2*worst
}

// Cost is a number of tokens that surely complete the document from here
// (see costs); 0 once it may end.
func (m *Matcher) Cost() int { return m.c.costs.cost(m.stk) }

// MaskWithin is Mask less the tokens after which the document cannot be
// completed in budget more tokens (Cost), budget not counting the end
// token: an end token of the vocabulary fits budget -1. It is empty only
// when the document is complete and nothing but the end fits (the caller
// adds its own end tokens). When the budget is already too small for the
// shortest completion it keeps the tokens that bring the end closest (the
// output still runs out, as little short of valid as it can). The result
// is shared: do not modify it.
func (m *Matcher) MaskWithin(budget int) Mask {
	c := m.c
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(m.stk)
	now := c.costs.cost(m.stk)
	if c.bound < unreachable && budget >= satAdd(now, c.bound) {
		return e.mask // no token can raise the cost by more than bound
	}
	if e.maxAfter < 0 {
		worst, _ := c.scan(m.stk, e.mask, -1, nil)
		e.maxAfter = int32(min(worst, unreachable))
	}
	if int(e.maxAfter) <= budget {
		return e.mask
	}
	out := make(Mask, len(e.mask))
	_, best := c.scan(m.stk, e.mask, max(budget, now-1), out)
	if budget >= now-1 {
		return out // empty only when just the end may come
	}
	if out.empty() && best < unreachable {
		c.scan(m.stk, e.mask, best, out) // nothing makes progress: the least bad
	}
	if out.empty() {
		return e.mask
	}
	return out
}

func (m Mask) empty() bool {
	for _, w := range m {
		if w != 0 {
			return false
		}
	}
	return true
}

// scan steps the tokens of mask from stk. With out nil it returns the
// highest cost after any of them; otherwise it sets in out the tokens
// whose cost after is at most budget. It returns the highest and the
// lowest cost after a token (as bounds: in a string body the clean tokens
// count as the cost now). In a string body the clean tokens never raise
// the cost (they only write characters), so they are decided as one block
// unless the budget is below the cost now.
func (c *Compiled) scan(stk []frame, mask Mask, budget int, out Mask) (worst, best int) {
	now := c.costs.cost(stk)
	best = unreachable
	visit := func(id int32) {
		if !mask.Has(id) {
			return
		}
		after := -1 // an end token: it takes the end's place
		if len(c.v.bytes[id]) > 0 {
			buf := append(c.tmp[:0], stk...)
			ok := true
			for _, b := range c.v.bytes[id] {
				if buf, ok = c.g.step(buf, b); !ok {
					break
				}
			}
			c.tmp = buf[:0]
			if !ok {
				return
			}
			after = c.costs.cost(buf)
		}
		worst, best = max(worst, after), min(best, after)
		if out != nil && after <= budget {
			out.set(id)
		}
	}
	if top := &stk[len(stk)-1]; c.g.nodes[top.node].kind == kString && top.st == strBody {
		if out == nil || now <= budget {
			worst, best = now, now
			if out != nil {
				for w := range out {
					out[w] |= c.v.clean[w] & mask[w]
				}
			}
		} else {
			for w, word := range mask {
				for x := word & c.v.clean[w]; x != 0; x &= x - 1 {
					visit(int32(w<<6 + bits.TrailingZeros64(x)))
				}
			}
		}
		// The other tokens: stepped on the string's frame alone while they
		// stay in it (the frames below do not change), from its parent on
		// once they close it.
		top := stk[len(stk)-1]
		parent := stk[:len(stk)-1]
		rest := now - c.costs.remaining(&top, c.costs.mb)
		for _, id := range c.v.dirty {
			if !mask.Has(id) {
				continue
			}
			one := append(c.one[:0], top)
			after, ok := -1, true
			for i, b := range c.v.bytes[id] {
				if one, ok = c.g.step(one, b); !ok {
					break
				}
				if len(one) == 0 { // the string closed: the rest from its parent
					buf := append(c.tmp[:0], parent...)
					for _, b := range c.v.bytes[id][i+1:] {
						if buf, ok = c.g.step(buf, b); !ok {
							break
						}
					}
					c.tmp = buf[:0]
					after = c.costs.cost(buf)
					break
				}
			}
			if !ok {
				continue
			}
			if len(one) > 0 {
				after = rest + c.costs.remaining(&one[0], c.costs.mb)
				c.one = one[:0]
			}
			worst, best = max(worst, after), min(best, after)
			if out != nil && after <= budget {
				out.set(id)
			}
		}
		for _, id := range c.v.end {
			visit(id)
		}
		return worst, best
	}
	for w, word := range mask {
		for x := word; x != 0; x &= x - 1 {
			visit(int32(w<<6 + bits.TrailingZeros64(x)))
		}
	}
	return worst, best
}

// inPlainString reports whether a frame is in the body of a string
// without length bounds (clean tokens stay in it at no cost).
func (c *Compiled) inPlainString(f *frame) bool {
	if f.node < 0 {
		return false
	}
	n := &c.g.nodes[f.node]
	return n.kind == kString && f.st == strBody && n.maxLen < 0 && n.minLen == 0
}
