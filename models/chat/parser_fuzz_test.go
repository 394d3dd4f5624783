package chat

import (
	"reflect"
	"strings"
	"testing"
)

// fuzzPieces cuts s into what a parser is fed: the markers in s (of any
// template) become marker tokens or stay text, and the text is cut into
// pieces of 1 to 16 bytes, as the layout's bytes say (no layout: markers
// are tokens, text is whole); with odd, some text pieces are fed as
// special pieces too, which a TokenReader never does.
func fuzzPieces(s string, layout []byte, odd bool) []piece {
	li := 0
	next := func() byte {
		if len(layout) == 0 {
			return 0xff
		}
		b := layout[li%len(layout)]
		li++
		return b
	}
	var out []piece
	cut := func(t string) {
		for len(t) > 0 {
			n := len(t)
			if len(layout) > 0 {
				n = min(n, 1+int(next()%16))
			}
			out = append(out, piece{text: t[:n], special: odd && next()%7 == 0})
			t = t[n:]
		}
	}
	markers := allMarkers()
	text := 0
	for i := 0; i < len(s); {
		m := ""
		for _, c := range markers {
			if strings.HasPrefix(s[i:], c) {
				m = c
			}
		}
		if m == "" || next()&0x80 == 0 {
			i += max(len(m), 1)
			continue
		}
		cut(s[text:i])
		out = append(out, piece{text: m, special: true})
		i += len(m)
		text = i
	}
	cut(s[text:])
	return out
}

// merged is pieces with adjacent text pieces joined; bytes is pieces with
// the text cut into single bytes.
func merged(pieces []piece) []piece {
	var out []piece
	for _, pc := range pieces {
		if n := len(out); n > 0 && !pc.special && !out[n-1].special {
			out[n-1].text += pc.text
			continue
		}
		out = append(out, pc)
	}
	return out
}

func bytesOf(pieces []piece) []piece {
	var out []piece
	for _, pc := range pieces {
		if pc.special {
			out = append(out, pc)
			continue
		}
		for i := 0; i < len(pc.text); i++ {
			out = append(out, piece{text: pc.text[i : i+1]})
		}
	}
	return out
}

// isSubsequence reports whether sub's bytes occur in s in order.
func isSubsequence(sub, s string) bool {
	for i := 0; i < len(sub); i++ {
		j := strings.IndexByte(s, sub[i])
		if j < 0 {
			return false
		}
		s = s[j+1:]
	}
	return true
}

// FuzzToolCallParser feeds the Hermes and Llama parsers arbitrary output
// (fuzzPieces: arbitrary text, arbitrary cuts, markers as tokens or as
// text) under the Provenance that mode's bits pick (1 SpelledOpen, 2
// SpelledClose, 4 Unmarked; 8 also feeds non-markers as special pieces).
// It checks:
//
//  1. no panic, and the events are well formed (checkInvariants: starts in
//     order, fragments add up to the arguments, errors name started calls);
//  2. the content is a subsequence of the output: nothing is invented;
//  3. the cuts of the text do not matter: the text pieces merged, or cut
//     into single bytes, give the same coalesced events;
//  4. text alone calls nothing where the provenance lets no text call
//     (no SpelledOpen, and no Unmarked for Llama): with no special piece,
//     the events are one text event holding the output verbatim;
//  5. with marker tokens at markers only, and text that cannot open a
//     call: Hermes ends or fails at most one call per opening marker
//     token; Llama calls nothing without a python tag token;
//  6. with marker tokens at markers only, under TextProvenance: the events
//     are those of the whole output fed as one text (a marker token means
//     what trusted text that spells it means).
func FuzzToolCallParser(f *testing.F) {
	for _, c := range append(append(append([]parserCase{}, hermesCases...), llamaCases...), mistralCases...) {
		for _, mode := range []uint8{0, 3, 4, 7, 8} {
			f.Add(c.in, []byte{0x83, 0x05, 0x9a}, mode)
		}
	}
	f.Add(echoedCall, []byte{}, uint8(0))
	f.Add(echoedCall, []byte{0x00, 0x01}, uint8(0))
	f.Add("You said: "+echoedCall, []byte{0x7f}, uint8(4))
	f.Add("<tool_call><tool_call></tool_call></tool_call>", []byte{0xff, 0x00}, uint8(2))
	f.Add(" \n<|python_tag|>{\"name\": \"a\"}; {\"name\": \"b\", \"parameters\": {}}", []byte{0x80, 0x02}, uint8(0))
	f.Add("{\"name\"\x00: \"\\u00\"}<tool_ca", []byte{0x11, 0x92}, uint8(15))
	f.Fuzz(func(t *testing.T, s string, layout []byte, mode uint8) {
		prov := Provenance{SpelledOpen: mode&1 != 0, SpelledClose: mode&2 != 0, Unmarked: mode&4 != 0}
		odd := mode&8 != 0
		pieces := fuzzPieces(s, layout, odd)
		var all strings.Builder
		specials := map[string]int{}
		for _, pc := range pieces {
			all.WriteString(pc.text)
			if pc.special {
				specials[pc.text]++
			}
		}
		output := all.String()
		for _, tc := range []struct {
			name   string
			newP   func(Provenance) ToolCallParser
			markup Markup
		}{
			{"hermes", func(p Provenance) ToolCallParser { return hermesWith(p)() }, NewHermes().ToolCallMarkup()},
			{"llama", func(p Provenance) ToolCallParser { return llamaWith(p)() }, NewLlama31(Llama31Options{}).ToolCallMarkup()},
			{"mistral", func(p Provenance) ToolCallParser { return NewMistralParser(WithIDs(seqIDs), WithProvenance(p)) }, toolFormats["mistral"].Markup},
		} {
			got := Coalesce(feedPieces(tc.newP(prov), pieces))
			checkInvariants(t, got)
			if content := Summarize(got).Content; !isSubsequence(content, output) {
				t.Fatalf("%s: content %q is not in the output %q", tc.name, content, output)
			}
			for _, other := range [][]piece{merged(pieces), bytesOf(pieces)} {
				if again := Coalesce(feedPieces(tc.newP(prov), other)); !reflect.DeepEqual(again, got) {
					t.Fatalf("%s: the cuts of the text changed the events of %+v:\n%+v\n%+v", tc.name, pieces, got, again)
				}
			}
			textCalls := prov.SpelledOpen || (prov.Unmarked && tc.markup.Unmarked)
			if len(specials) == 0 && !textCalls {
				var want []Event
				if output != "" {
					want = []Event{text(output)}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: text alone %q gave %+v", tc.name, output, got)
				}
			}
			if odd {
				continue
			}
			if !textCalls {
				calls := 0
				for _, e := range got {
					if e.Kind == EventToolCallEnd || e.Kind == EventError {
						calls++
					}
				}
				if opens := specials[tc.markup.Open]; (tc.name == "hermes" && calls > opens) || (opens == 0 && calls > 0) {
					t.Fatalf("%s: %d calls from %d opening marker tokens in %+v", tc.name, calls, opens, pieces)
				}
			}
			if prov == TextProvenance() {
				whole := Coalesce(feedPieces(tc.newP(prov), []piece{{text: output}}))
				if !reflect.DeepEqual(whole, got) {
					t.Fatalf("%s: marker tokens read otherwise than the text %q:\n%+v\n%+v", tc.name, output, got, whole)
				}
			}
		}
	})
}
