package grammar

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"sync"
)

// Vocab is a tokenizer's vocabulary as a byte trie, for masks. Build it
// once per tokenizer.
type Vocab struct {
	size  int
	bytes [][]byte // per token id; nil: never allowed inside a document
	end   []int32  // tokens that end the output
	// The trie: node i's edges are edgeByte/edgeNode[first[i]:first[i+1]];
	// the tokens whose bytes end at node i are toks[tokAt[i]:tokAt[i+1]].
	first    []int32
	edgeByte []byte
	edgeNode []int32
	tokAt    []int32
	toks     []int32
	maxLen   int
	// clean are the tokens a string body takes whatever the stack holds:
	// printable ASCII but the quote and the backslash, and whole UTF-8
	// characters; dirty are the other tokens with bytes (the string
	// fast path checks only them).
	clean Mask
	dirty []int32
	// From a string body without length bounds: stay are the tokens that
	// keep the output in the string whatever the stack holds (the clean
	// ones, and those with escapes or an unfinished UTF-8 character at
	// their end); exit are those that close it at byte exitAt[i], whose
	// rest depends on what follows the string.
	stay   Mask
	exit   []int32
	exitAt []int32
}

// NewVocab builds the trie of a vocabulary: tokens[id] are the bytes token
// id stands for (nil or empty for special tokens, which are never allowed
// inside a document), end the tokens that end the output (end of turn,
// end of text), allowed once the document is complete.
func NewVocab(tokens [][]byte, end []int32) *Vocab {
	v := &Vocab{size: len(tokens), bytes: tokens, end: end}
	type tnode struct {
		kids map[byte]int
		toks []int32
	}
	nodes := []tnode{{}}
	for id, t := range tokens {
		if len(t) == 0 {
			continue
		}
		v.maxLen = max(v.maxLen, len(t))
		cur := 0
		for _, b := range t {
			if nodes[cur].kids == nil {
				nodes[cur].kids = map[byte]int{}
			}
			next, ok := nodes[cur].kids[b]
			if !ok {
				next = len(nodes)
				nodes = append(nodes, tnode{})
				nodes[cur].kids[b] = next
			}
			cur = next
		}
		nodes[cur].toks = append(nodes[cur].toks, int32(id))
	}
	// Flatten, children in byte order.
	v.first = make([]int32, len(nodes)+1)
	v.tokAt = make([]int32, len(nodes)+1)
	for i, n := range nodes {
		v.first[i] = int32(len(v.edgeByte))
		keys := make([]int, 0, len(n.kids))
		for b := range n.kids {
			keys = append(keys, int(b))
		}
		sort.Ints(keys)
		for _, b := range keys {
			v.edgeByte = append(v.edgeByte, byte(b))
			v.edgeNode = append(v.edgeNode, int32(n.kids[byte(b)]))
		}
		v.tokAt[i] = int32(len(v.toks))
		v.toks = append(v.toks, n.toks...)
	}
	v.first[len(nodes)] = int32(len(v.edgeByte))
	v.tokAt[len(nodes)] = int32(len(v.toks))
	v.clean = make(Mask, (len(tokens)+63)/64)
	v.stay = make(Mask, len(v.clean))
	for id, t := range tokens {
		switch {
		case len(t) == 0:
		case cleanInString(t):
			v.clean.set(int32(id))
			v.stay.set(int32(id))
		default:
			v.dirty = append(v.dirty, int32(id))
			switch at := stringExit(t); {
			case at == stays:
				v.stay.set(int32(id))
			case at >= 0:
				v.exit, v.exitAt = append(v.exit, int32(id)), append(v.exitAt, int32(at))
			}
		}
	}
	return v
}

// stays and refused are stringExit's answers but an index.
const (
	stays   = -1
	refused = -2
)

// stringExit steps a token's bytes from a string body: stays if they stay
// in the string, refused if a byte cannot come, else the index of the
// quote that closes it.
func stringExit(t []byte) int {
	f := frame{st: strBody}
	for i, b := range t {
		if f.st == strBody && b == '"' {
			return i
		}
		if !stepString(&f, b) {
			return refused
		}
	}
	return stays
}

// cleanInString reports whether bytes leave a string body as they found
// it: no quote, backslash or control byte, whole UTF-8 characters only.
func cleanInString(t []byte) bool {
	for i := 0; i < len(t); {
		b := t[i]
		switch {
		case b == '"' || b == '\\' || b < 0x20:
			return false
		case b < 0x80:
			i++
			continue
		}
		n := 0
		switch {
		case b >= 0xC2 && b <= 0xDF:
			n = 1
		case b >= 0xE0 && b <= 0xEF:
			n = 2
		case b >= 0xF0 && b <= 0xF4:
			n = 3
		default:
			return false
		}
		if i+n >= len(t) {
			return false
		}
		for j := 1; j <= n; j++ {
			lo, hi := byte(0x80), byte(0xBF)
			if j == 1 {
				lo, hi = continuation(b)
			}
			if t[i+j] < lo || t[i+j] > hi {
				return false
			}
		}
		i += n + 1
	}
	return true
}

// Size is the number of token ids.
func (v *Vocab) Size() int { return v.size }

// Mask is a set of token ids, one bit each.
type Mask []uint64

// Has reports whether token id is in the mask.
func (m Mask) Has(id int32) bool { return id >= 0 && int(id>>6) < len(m) && m[id>>6]&(1<<(id&63)) != 0 }

func (m Mask) set(id int32) { m[id>>6] |= 1 << (id & 63) }

// Count is the number of tokens in the mask.
func (m Mask) Count() int {
	n := 0
	for _, w := range m {
		for ; w != 0; w &= w - 1 {
			n++
		}
	}
	return n
}

// negInf is a block of -Inf copied over runs of refused tokens.
var negInf = func() (b [4096]float32) {
	for i := range b {
		b[i] = float32(math.Inf(-1))
	}
	return b
}()

// Apply sets the logits of the tokens outside the mask to -Inf (the
// sampler's step before temperature and top-p): whole words of allowed
// tokens are skipped, runs of refused words are one block copy (memmove),
// and within a mixed word only the refused bits are visited.
func (m Mask) Apply(logits []float32) {
	neg := float32(math.Inf(-1))
	n := len(logits)
	for w := 0; w < len(m); w++ {
		base := w << 6
		if base >= n {
			return
		}
		word := m[w]
		if word == 0 {
			end := w + 1
			for end < len(m) && m[end] == 0 {
				end++
			}
			for lo, hi := base, min(end<<6, n); lo < hi; {
				lo += copy(logits[lo:hi], negInf[:])
			}
			w = end - 1
			continue
		}
		if base+64 > n {
			for i := base; i < n; i++ {
				if word&(1<<(i-base)) == 0 {
					logits[i] = neg
				}
			}
			return
		}
		for x := ^word; x != 0; x &= x - 1 {
			logits[base+bits.TrailingZeros64(x)] = neg
		}
	}
}

// Compiled is a grammar over a vocabulary, with the masks of the states
// seen so far. It is safe for concurrent use.
type Compiled struct {
	g *Grammar
	v *Vocab

	// costs of completing a document, and bound how much one token can
	// raise them (budget.go).
	costs *costs
	bound int

	mu       sync.Mutex
	masks    map[string]*stateMask
	maxMasks int
	bufs     [][]frame // trie walk scratch, one stack per depth (under mu)
	tmp      []frame
	one      []frame // a string's frame alone (budget scans)
	key      []byte
}

// stateMask is a state's mask, and the highest cost of completing after
// any of its tokens (-1: not computed yet; MaskWithin computes it).
type stateMask struct {
	mask     Mask
	maxAfter int32
}

// MaskBudget is the memory the masks of one Compiled may take.
const MaskBudget = 32 << 20

// NewCompiled pairs a grammar with a vocabulary.
func NewCompiled(g *Grammar, v *Vocab) *Compiled {
	per := (v.size + 63) / 64 * 8
	k := newCosts(g, v)
	bound := k.stepBound()
	if bound < unreachable {
		bound = min(bound*max(v.maxLen, 1), unreachable)
	}
	return &Compiled{g: g, v: v, costs: k, bound: bound, masks: map[string]*stateMask{}, maxMasks: max(MaskBudget/max(per, 1), 16)}
}

// Vocab is the compiled grammar's vocabulary.
func (c *Compiled) Vocab() *Vocab { return c.v }

// CachedMasks is how many states' masks are cached.
func (c *Compiled) CachedMasks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.masks)
}

// Matcher follows one output through a compiled grammar. It is not safe
// for concurrent use.
type Matcher struct {
	c    *Compiled
	stk  []frame
	tmp  []frame
	done bool
}

// NewMatcher starts an output.
func (c *Compiled) NewMatcher() *Matcher {
	return &Matcher{c: c, stk: []frame{{node: c.g.root}}}
}

// Done reports whether an end token was accepted.
func (m *Matcher) Done() bool { return m.done }

// CanEnd reports whether the document is complete.
func (m *Matcher) CanEnd() bool { return !m.done && m.c.g.canEnd(m.stk) }

// Accept advances the output by token id. It returns an error, and leaves
// the state as it was, when the token cannot continue a valid document.
func (m *Matcher) Accept(id int32) error {
	if m.done {
		return fmt.Errorf("grammar: token %d after the end", id)
	}
	for _, e := range m.c.v.end {
		if e == id {
			if !m.c.g.canEnd(m.stk) {
				return fmt.Errorf("grammar: end token %d before the document is complete", id)
			}
			m.done = true
			return nil
		}
	}
	if id < 0 || int(id) >= m.c.v.size || len(m.c.v.bytes[id]) == 0 {
		return fmt.Errorf("grammar: token %d has no bytes a document may hold", id)
	}
	tmp := append(m.tmp[:0], m.stk...)
	for _, b := range m.c.v.bytes[id] {
		var ok bool
		if tmp, ok = m.c.g.step(tmp, b); !ok {
			m.tmp = tmp
			return fmt.Errorf("grammar: token %d (%q) does not continue a valid document", id, m.c.v.bytes[id])
		}
	}
	m.stk, m.tmp = tmp, m.stk
	return nil
}

// AcceptBytes advances the output by raw bytes (tests, fuzzing).
func (m *Matcher) AcceptBytes(p []byte) bool {
	for _, b := range p {
		var ok bool
		if m.stk, ok = m.c.g.step(m.stk, b); !ok {
			return false
		}
	}
	return true
}

// Mask is the set of tokens that may come next: those whose bytes
// continue a valid document, and the end tokens once it is complete. The
// mask is shared: do not modify it.
func (m *Matcher) Mask() Mask {
	c := m.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entry(m.stk).mask
}

// entry is the cached mask of a state, computed on first use (under c.mu).
func (c *Compiled) entry(stk []frame) *stateMask {
	c.key = appendKey(c.key[:0], stk)
	if e, ok := c.masks[string(c.key)]; ok {
		return e
	}
	e := &stateMask{mask: c.compute(stk), maxAfter: -1}
	if len(c.masks) < c.maxMasks {
		c.masks[string(c.key)] = e
	}
	return e
}

// appendKey serializes a stack: equal keys, equal states.
func appendKey(k []byte, stk []frame) []byte {
	for i := range stk {
		f := &stk[i]
		k = binary.LittleEndian.AppendUint32(k, uint32(f.node))
		k = append(k, f.st, f.ws, f.sub)
		k = binary.LittleEndian.AppendUint16(k, f.pos)
		k = binary.LittleEndian.AppendUint64(k, f.cand)
		k = binary.LittleEndian.AppendUint64(k, f.seen)
		k = binary.LittleEndian.AppendUint16(k, uint16(f.cur))
	}
	return k
}

// compute walks the trie from stk (under c.mu). In a string body without
// length bounds the tokens that stay in the string are taken as a block
// and only those that close it are stepped through, from the quote on
// (the context-independent tokens of xgrammar).
func (c *Compiled) compute(stk []frame) Mask {
	if c.inPlainString(&stk[len(stk)-1]) {
		return c.computeInString(stk)
	}
	return c.walkAll(stk)
}

func (c *Compiled) computeInString(stk []frame) Mask {
	mask := append(Mask(nil), c.v.stay...)
	parent := stk[:len(stk)-1] // the string's parent, as its push left it
	for i, id := range c.v.exit {
		buf := append(c.tmp[:0], parent...)
		ok := true
		for _, b := range c.v.bytes[id][c.v.exitAt[i]+1:] {
			if buf, ok = c.g.step(buf, b); !ok {
				break
			}
		}
		c.tmp = buf[:0]
		if ok {
			mask.set(id)
		}
	}
	return mask
}

// walkAll is the trie walk.
func (c *Compiled) walkAll(stk []frame) Mask {
	mask := make(Mask, (c.v.size+63)/64)
	if c.g.canEnd(stk) {
		for _, e := range c.v.end {
			mask.set(e)
		}
	}
	for len(c.bufs) < c.v.maxLen+2 {
		c.bufs = append(c.bufs, nil)
	}
	c.walk(0, stk, 1, mask)
	return mask
}

func (c *Compiled) walk(node int32, stk []frame, depth int, mask Mask) {
	v := c.v
	for e := v.first[node]; e < v.first[node+1]; e++ {
		buf := append(c.bufs[depth][:0], stk...)
		buf, ok := c.g.step(buf, v.edgeByte[e])
		c.bufs[depth] = buf[:0]
		if !ok {
			continue
		}
		child := v.edgeNode[e]
		for _, id := range v.toks[v.tokAt[child]:v.tokAt[child+1]] {
			mask.set(id)
		}
		if v.first[child] < v.first[child+1] {
			c.walk(child, buf, depth+1, mask)
		}
	}
}
