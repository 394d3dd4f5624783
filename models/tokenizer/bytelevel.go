package tokenizer

import "unicode/utf8"

// The GPT-2 byte-to-unicode table: every byte maps to a printable rune so
// that a byte-level BPE vocabulary can be written as JSON strings. Printable
// Latin-1 bytes map to themselves; the 68 others (controls, space, 0x7f-0xa0,
// 0xad) map to U+0100 onwards in byte order.
var (
	byteToRune [256]rune
	runeToByte = map[rune]byte{}
)

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// byteLevelEncode maps raw bytes to their byte-level string form ("Ġhello").
func byteLevelEncode(raw string) string {
	buf := make([]byte, 0, len(raw)*2)
	for i := 0; i < len(raw); i++ {
		buf = utf8.AppendRune(buf, byteToRune[raw[i]])
	}
	return string(buf)
}

// byteLevelDecode maps a byte-level token string back to raw bytes. As the
// Hugging Face ByteLevel decoder does, a token holding a rune outside the
// table is taken as its own UTF-8 bytes, whole.
func byteLevelDecode(tok string) []byte {
	out := make([]byte, 0, len(tok))
	for _, r := range tok {
		b, ok := runeToByte[r]
		if !ok {
			return []byte(tok)
		}
		out = append(out, b)
	}
	return out
}
