// Package jsondepth tells a JSON text nested deeper than encoding/json
// decodes (it refuses more than 10,000 arrays and objects open at once).
// The router's call path decodes with segmentio/encoding's json, which has
// no such limit: checked first, a deeper text goes to encoding/json, which
// refuses it as it always did. Written here because the check is one loop
// and neither library exports it.
package jsondepth

import "bytes"

// Max is encoding/json's limit on arrays and objects open at once.
const Max = 10000

// Exceeds reports whether data opens more than Max arrays and objects at
// once outside its strings. For valid JSON that is exactly when
// encoding/json refuses it for its depth; of invalid JSON it may say
// either (both decoders refuse it anyway). A text with at most Max
// brackets and braces in all is answered after one fast count.
func Exceeds(data []byte) bool {
	if bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) <= Max {
		return false
	}
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > Max {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}
