package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// kind is what a schema node recognizes.
type kind uint8

const (
	kRoot    kind = iota // the document: one value (child), then the end
	kAny                 // any JSON value: the first byte picks the node
	kObject              // an object: declared properties, or free keys
	kArray               // an array of items
	kString              // a string
	kNumber              // a number
	kInteger             // an integer
	kLiteral             // one of lits, byte for byte (enum, const, true, false, null)
	kUnion               // anyOf whose branches start with different bytes
	kCall                // a tool call: {"name": NAME, "arguments": ARGS}
)

// node is one compiled schema node.
type node struct {
	kind kind
	// kObject
	keys     []string // JSON-encoded property names, with their quotes
	props    []int32  // the nodes of the properties' values
	required uint64
	free     bool  // keys are any strings; values are values
	values   int32 // free: the node of the values
	// kArray
	items              int32
	minItems, maxItems int // maxItems < 0: no limit
	// kString: length bounds in characters (maxLen < 0: none)
	minLen, maxLen int
	// kLiteral
	lits []string
	// kUnion
	alts []int32
	// kRoot
	child int32
	// first are the bytes a value of the node may start with.
	first [256]bool
}

// Grammar is a compiled JSON Schema: the nodes of the recognizer.
type Grammar struct {
	nodes []node
	root  int32 // the kRoot node
	any   struct{ obj, arr, str, num, lit int32 }
}

// Limits of a schema.
const (
	MaxProperties = 64
	MaxEnum       = 64
	// MaxWhitespace is the whitespace allowed between two tokens of JSON.
	MaxWhitespace = 2
	// MaxDepth bounds the nesting of the output (objects and arrays).
	MaxDepth = 32
)

// annotations are keywords that do not constrain a value.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$schema": true,
	"$id": true, "$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"strict": true, "$defs": true, "definitions": true,
}

// constraints are the keywords compiled.
var constraints = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"minItems": true, "maxItems": true, "minLength": true, "maxLength": true, "enum": true, "const": true, "anyOf": true, "oneOf": true, "$ref": true,
}

// UnsupportedError is a schema keyword the compiler does not support.
type UnsupportedError struct {
	Keyword string // e.g. "pattern"
	Path    string // where, as a JSON pointer
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("the JSON Schema keyword %q (at %s) is not supported by constrained decoding; supported: %s",
		e.Keyword, e.Path, strings.Join(sortedKeys(constraints), ", "))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// compiler holds the state of one Compile.
type compiler struct {
	g    *Grammar
	doc  map[string]any
	refs map[string]int32
}

// Compile compiles a JSON Schema into a grammar of the documents that
// validate against it. Unsupported keywords are an *UnsupportedError;
// malformed schemas are other errors naming where.
func Compile(schema []byte) (*Grammar, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	c := newCompiler()
	root, _ := doc.(map[string]any)
	c.doc = root
	n, err := c.compile(doc, "#")
	if err != nil {
		return nil, err
	}
	c.g.nodes[c.g.root].child = n
	return c.g, nil
}

// AnyJSON is the grammar of any JSON document whose top level is an
// object (response_format json_object).
func AnyJSON() *Grammar {
	c := newCompiler()
	c.g.nodes[c.g.root].child = c.g.any.obj
	return c.g
}

func newCompiler() *compiler {
	g := &Grammar{}
	c := &compiler{g: g, refs: map[string]int32{}}
	g.root = c.add(node{kind: kRoot})
	anyN := c.add(node{kind: kAny})
	g.any.obj = c.add(node{kind: kObject, free: true, values: anyN})
	g.any.arr = c.add(node{kind: kArray, items: anyN, maxItems: -1})
	g.any.str = c.add(node{kind: kString, maxLen: -1})
	g.any.num = c.add(node{kind: kNumber})
	g.any.lit = c.add(node{kind: kLiteral, lits: []string{"true", "false", "null"}})
	for _, i := range []int32{g.any.obj, g.any.arr, g.any.str, g.any.num, g.any.lit} {
		c.setFirst(i)
		for b := range 256 {
			g.nodes[anyN].first[b] = g.nodes[anyN].first[b] || g.nodes[i].first[b]
		}
	}
	return c
}

func (c *compiler) add(n node) int32 {
	c.g.nodes = append(c.g.nodes, n)
	return int32(len(c.g.nodes) - 1)
}

// setFirst fills a node's first bytes from its kind.
func (c *compiler) setFirst(i int32) {
	n := &c.g.nodes[i]
	switch n.kind {
	case kObject:
		n.first['{'] = true
	case kArray:
		n.first['['] = true
	case kString:
		n.first['"'] = true
	case kNumber, kInteger:
		n.first['-'] = true
		for b := '0'; b <= '9'; b++ {
			n.first[b] = true
		}
	case kLiteral:
		for _, l := range n.lits {
			n.first[l[0]] = true
		}
	}
}

func (c *compiler) compile(v any, path string) (int32, error) {
	switch s := v.(type) {
	case bool:
		if s {
			return c.anyNode(), nil
		}
		return 0, fmt.Errorf("the schema at %s is false: no value validates", path)
	case map[string]any:
		return c.compileObject(s, path)
	}
	return 0, fmt.Errorf("the schema at %s must be an object or a boolean", path)
}

// anyNode is the node of any value.
func (c *compiler) anyNode() int32 { return c.g.nodes[c.g.any.obj].values }

func (c *compiler) compileObject(s map[string]any, path string) (int32, error) {
	for _, k := range sortedAny(s) {
		if !annotations[k] && !constraints[k] {
			return 0, &UnsupportedError{Keyword: k, Path: path}
		}
	}
	if ref, ok := s["$ref"]; ok {
		if len(s) > 1 {
			for k := range s {
				if k != "$ref" && constraints[k] {
					return 0, &UnsupportedError{Keyword: "$ref beside " + k, Path: path}
				}
			}
		}
		return c.ref(ref, path)
	}
	if e, ok := s["const"]; ok {
		return c.literal([]any{e}, path+"/const")
	}
	if e, ok := s["enum"]; ok {
		list, ok := e.([]any)
		if !ok || len(list) == 0 {
			return 0, fmt.Errorf("enum at %s must be a non-empty array", path)
		}
		return c.literal(list, path+"/enum")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k]; ok {
			return c.union(alts, path+"/"+k)
		}
	}
	var types []string
	switch t := s["type"].(type) {
	case nil:
		switch {
		case s["properties"] != nil || s["required"] != nil || s["additionalProperties"] != nil:
			types = []string{"object"}
		case s["items"] != nil:
			types = []string{"array"}
		default:
			return c.anyNode(), nil
		}
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			str, ok := x.(string)
			if !ok {
				return 0, fmt.Errorf("type at %s must be a string or an array of strings", path)
			}
			types = append(types, str)
		}
	default:
		return 0, fmt.Errorf("type at %s must be a string or an array of strings", path)
	}
	if len(types) == 0 {
		return 0, fmt.Errorf("type at %s is an empty array", path)
	}
	var alts []int32
	for _, t := range types {
		n, err := c.typed(t, s, path)
		if err != nil {
			return 0, err
		}
		alts = append(alts, n)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return c.unionOf(alts, path+"/type")
}

func sortedAny(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// typed compiles one type of a schema.
func (c *compiler) typed(t string, s map[string]any, path string) (int32, error) {
	switch t {
	case "string":
		i := c.add(node{kind: kString})
		c.setFirst(i)
		var err error
		if c.g.nodes[i].minLen, err = count(s, "minLength", 0, path); err != nil {
			return 0, err
		}
		if c.g.nodes[i].maxLen, err = count(s, "maxLength", -1, path); err != nil {
			return 0, err
		}
		if mx := c.g.nodes[i].maxLen; mx >= 0 && mx < c.g.nodes[i].minLen {
			return 0, fmt.Errorf("maxLength %d is below minLength %d at %s", mx, c.g.nodes[i].minLen, path)
		}
		return i, nil
	case "number":
		return c.leaf(kNumber), nil
	case "integer":
		return c.leaf(kInteger), nil
	case "boolean":
		return c.lit([]string{"true", "false"}), nil
	case "null":
		return c.lit([]string{"null"}), nil
	case "object":
		return c.object(s, path)
	case "array":
		return c.array(s, path)
	}
	return 0, fmt.Errorf("unknown type %q at %s (valid: string, number, integer, boolean, null, object, array)", t, path)
}

func (c *compiler) leaf(k kind) int32 {
	i := c.add(node{kind: k, maxLen: -1})
	c.setFirst(i)
	return i
}

func (c *compiler) lit(lits []string) int32 {
	i := c.add(node{kind: kLiteral, lits: lits})
	c.setFirst(i)
	return i
}

func (c *compiler) literal(values []any, path string) (int32, error) {
	if len(values) > MaxEnum {
		return 0, fmt.Errorf("%s has %d values, at most %d are supported", path, len(values), MaxEnum)
	}
	lits := make([]string, 0, len(values))
	seen := map[string]bool{}
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			lits = append(lits, string(b))
		}
	}
	return c.lit(lits), nil
}

func (c *compiler) object(s map[string]any, path string) (int32, error) {
	props, _ := s["properties"].(map[string]any)
	if s["properties"] != nil && props == nil {
		return 0, fmt.Errorf("properties at %s must be an object", path)
	}
	i := c.add(node{kind: kObject})
	c.setFirst(i)
	if len(props) == 0 {
		// An object without declared properties: any keys, with values of
		// additionalProperties (any value unless it says otherwise).
		vals := c.anyNode()
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				c.g.nodes[i].free = false // the empty object only
				return i, nil
			}
		case map[string]any:
			n, err := c.compile(ap, path+"/additionalProperties")
			if err != nil {
				return 0, err
			}
			vals = n
		}
		c.g.nodes[i].free, c.g.nodes[i].values = true, vals
		return i, nil
	}
	if len(props) > MaxProperties {
		return 0, fmt.Errorf("the object at %s has %d properties, at most %d are supported", path, len(props), MaxProperties)
	}
	names := sortedAny(props)
	keys := make([]string, len(names))
	nodes := make([]int32, len(names))
	for j, name := range names {
		k, _ := json.Marshal(name)
		keys[j] = string(k)
		n, err := c.compile(props[name], path+"/properties/"+name)
		if err != nil {
			return 0, err
		}
		nodes[j] = n
	}
	var required uint64
	if r, ok := s["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return 0, fmt.Errorf("required at %s must be an array of strings", path)
		}
		for _, x := range list {
			name, _ := x.(string)
			j := sort.SearchStrings(names, name)
			if j == len(names) || names[j] != name {
				return 0, fmt.Errorf("required at %s names %q, which is not among the properties: constrained decoding writes declared properties only", path, name)
			}
			required |= 1 << j
		}
	}
	n := &c.g.nodes[i]
	n.keys, n.props, n.required = keys, nodes, required
	return i, nil
}

func (c *compiler) array(s map[string]any, path string) (int32, error) {
	items := c.anyNode()
	if it, ok := s["items"]; ok {
		n, err := c.compile(it, path+"/items")
		if err != nil {
			return 0, err
		}
		items = n
	}
	minItems, err := count(s, "minItems", 0, path)
	if err != nil {
		return 0, err
	}
	maxItems, err := count(s, "maxItems", -1, path)
	if err != nil {
		return 0, err
	}
	if maxItems >= 0 && maxItems < minItems {
		return 0, fmt.Errorf("maxItems %d is below minItems %d at %s", maxItems, minItems, path)
	}
	i := c.add(node{kind: kArray, items: items, minItems: minItems, maxItems: maxItems})
	c.setFirst(i)
	return i, nil
}

// count reads a non-negative integer keyword (at most 1<<16).
func count(s map[string]any, k string, def int, path string) (int, error) {
	v, ok := s[k]
	if !ok {
		return def, nil
	}
	num, ok := v.(json.Number)
	n, err := num.Int64()
	if !ok || err != nil || n < 0 || n > 1<<16 {
		return 0, fmt.Errorf("%s at %s must be an integer between 0 and 65536", k, path)
	}
	return int(n), nil
}

func (c *compiler) union(v any, path string) (int32, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return 0, fmt.Errorf("%s must be a non-empty array of schemas", path)
	}
	alts := make([]int32, len(list))
	for j, x := range list {
		n, err := c.compile(x, fmt.Sprintf("%s/%d", path, j))
		if err != nil {
			return 0, err
		}
		alts[j] = n
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return c.unionOf(alts, path)
}

// unionOf is a union of nodes whose values start with different bytes, so
// that the first byte picks the branch.
func (c *compiler) unionOf(alts []int32, path string) (int32, error) {
	i := c.add(node{kind: kUnion, alts: alts})
	for j, a := range alts {
		for b := range 256 {
			if !c.g.nodes[a].first[b] {
				continue
			}
			if c.g.nodes[i].first[b] {
				return 0, &UnsupportedError{Keyword: fmt.Sprintf("branches that start alike (branch %d and an earlier one can both start with %q)", j, rune(b)), Path: path}
			}
			c.g.nodes[i].first[b] = true
		}
	}
	return i, nil
}

func (c *compiler) ref(v any, path string) (int32, error) {
	ref, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("$ref at %s must be a string", path)
	}
	if n, ok := c.refs[ref]; ok {
		return n, nil
	}
	var defs map[string]any
	var name string
	switch {
	case strings.HasPrefix(ref, "#/$defs/"):
		defs, _ = c.doc["$defs"].(map[string]any)
		name = strings.TrimPrefix(ref, "#/$defs/")
	case strings.HasPrefix(ref, "#/definitions/"):
		defs, _ = c.doc["definitions"].(map[string]any)
		name = strings.TrimPrefix(ref, "#/definitions/")
	case ref == "#":
		defs, name = map[string]any{"#": c.doc}, "#"
	default:
		return 0, &UnsupportedError{Keyword: "$ref " + ref + " (only #, #/$defs/... and #/definitions/...)", Path: path}
	}
	target, ok := defs[name]
	if !ok {
		return 0, fmt.Errorf("$ref %s at %s names no definition", ref, path)
	}
	// A placeholder union of one branch stands for the definition while it
	// compiles, so recursive references find it.
	i := c.add(node{kind: kUnion})
	c.refs[ref] = i
	n, err := c.compile(target, ref)
	if err != nil {
		return 0, err
	}
	for x := n; c.g.nodes[x].kind == kUnion && len(c.g.nodes[x].alts) == 1; x = c.g.nodes[x].alts[0] {
		if x == i {
			return 0, fmt.Errorf("$ref %s at %s refers to itself with no object or array between", ref, path)
		}
	}
	if n == i {
		return 0, fmt.Errorf("$ref %s at %s refers to itself with no object or array between", ref, path)
	}
	c.g.nodes[i].alts = []int32{n}
	c.g.nodes[i].first = c.g.nodes[n].first
	return i, nil
}
