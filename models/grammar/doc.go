// Package grammar is pitstop's constrained decoding: it compiles a JSON
// Schema (a subset, below) into a byte-level pushdown recognizer of the
// JSON documents that validate against it, and turns the recognizer's
// state into a mask over a tokenizer's vocabulary, so that a sampler that
// applies the mask before temperature and top-p can only write tokens that
// keep the output a prefix of a valid document, and can end only when the
// document is complete. The output always parses and validates.
//
// Why by hand: the mask is on the decode hot path and must know token
// bytes, the recognizer's state and the cache together (xgrammar, outlines
// and llama.cpp's GBNF are C++, Python and C++; no Go library compiles a
// schema to a vocabulary mask). Validation of finished documents in tests
// uses the JSON Schema library in go.mod (santhosh-tekuri/jsonschema).
//
// How the mask stays cheap (the techniques of xgrammar and llama.cpp):
//   - The vocabulary is a byte trie (Vocab), built once per tokenizer. A
//     mask is one walk of the trie from the current state: a subtree is
//     cut at the first byte the recognizer rejects, so tokens that share a
//     rejected prefix cost one step together.
//   - In a string body the tokens that cannot leave it (printable ASCII
//     but the quote and the backslash, whole UTF-8 characters) are accepted
//     whatever the stack holds: they are one precomputed block (Vocab's
//     clean tokens, xgrammar's context-independent tokens) and only the
//     other tokens are stepped through.
//   - The recognizer is deterministic and its state is small and finite for
//     a schema (a stack of frames: schema node, local state, properties
//     written), so masks are cached per state in the compiled schema
//     (Compiled), which is itself cached per schema (Cache). After the
//     first request of a schema has visited its states, a token's mask is
//     a lookup: advancing the state by the token's bytes and hashing it.
//
// The schema subset: type (one or a list), properties, required,
// additionalProperties (false; a schema for an object without properties;
// with properties declared only the declared ones are written, which
// validates whatever additionalProperties says), items, minItems, maxItems, minLength, maxLength,
// enum, const, anyOf and oneOf whose branches start with different bytes
// (an object and a string, a number and null; not two objects), $ref to
// "#/$defs/..." or "#/definitions/..." (recursion included), and the
// annotations (title, description, default, examples, $schema, $id,
// $comment, deprecated, readOnly, writeOnly, strict). Anything else
// (pattern, format, minimum, allOf, not, ...) is an error that
// names the keyword and where it is. Properties may be written in any
// order, once each; at most 64 per object and 64 enum values. Whitespace
// between tokens is allowed up to MaxWhitespace bytes at a time. Strings
// are valid UTF-8 (lead bytes are checked for the sequence length; the
// continuation bytes for range).
package grammar
