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
//   - In a string body the tokens that stay in it (printable ASCII but the
//     quote and the backslash, whole UTF-8 characters, escapes, a character
//     left unfinished at the token's end) are accepted whatever the stack
//     holds: they are one precomputed block (xgrammar's context-independent
//     tokens), and only the tokens that close the string are stepped
//     through, from the quote on, from the string's parent.
//   - The recognizer is deterministic and its state is small and finite for
//     a schema (a stack of frames: schema node, local state, properties
//     written), so masks are cached per state in the compiled schema
//     (Compiled), which is itself cached per schema (Cache). After the
//     first request of a schema has visited its states, a token's mask is
//     a lookup: advancing the state by the token's bytes and hashing it.
//
// Closing within a budget (budget.go): from any state the recognizer knows
// a number of tokens that surely completes the document (Matcher.Cost) and
// MaskWithin keeps the tokens after which the rest still fits, so that a
// decoder that knows how many tokens it may still write always finishes.
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
// are valid UTF-8 as RFC 3629 has it (no overlong forms, no surrogates,
// nothing above U+10FFFF).
package grammar
