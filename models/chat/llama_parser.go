package chat

import "strings"

const pythonTag = "<|python_tag|>"

// LlamaParser parses Llama 3.1 JSON tool calls. An output is tool calls
// when it starts (after blanks) with "<|python_tag|>", or with {"name"
// (an unmarked call, which the Provenance may refuse); otherwise all of it
// is content. The python tag counts as a marker token, and as spelled text
// only where the Provenance allows it. Calls are JSON objects
// {"name": ..., "parameters": {...}} ("arguments" is read too) separated
// by ";" and/or blanks. Text after the calls is content. After a malformed
// call the parser skips to the next line and goes on.
type LlamaParser struct {
	em   emitter
	prov Provenance
	mode llamaMode
	head string // undecided start of the output
	call callState
}

type llamaMode int

const (
	lmUndecided llamaMode = iota
	lmText
	lmBetween
	lmObject
	lmSkipLine
)

// NewLlamaParser returns a parser for one assistant turn.
func NewLlamaParser(opts ...ParserOption) *LlamaParser {
	cfg := newConfig(opts)
	return &LlamaParser{em: emitter{cfg: cfg}, prov: cfg.prov}
}

// Feed implements ToolCallParser. A marker token matters only at the start
// of the output; elsewhere its text is read like any other.
func (p *LlamaParser) Feed(text string, special bool) []Event {
	if p.mode == lmUndecided {
		if special {
			if text == pythonTag && strings.TrimLeft(p.head, " \t\r\n") == "" {
				p.mode, p.head = lmBetween, ""
				return nil
			}
			// A token is whole: the head cannot grow into a start of calls.
			rest, _ := p.decide(true)
			p.run(rest)
		} else {
			p.head += text
			rest, decided := p.decide(false)
			if !decided {
				return nil
			}
			text = rest
		}
	}
	p.run(text)
	return p.em.take()
}

// Close implements ToolCallParser.
func (p *LlamaParser) Close() []Event {
	if p.mode == lmUndecided {
		rest, _ := p.decide(true)
		p.run(rest)
	}
	if p.mode == lmObject {
		p.em.finish(&p.call, string(p.call.sc.raw), "")
	}
	p.mode = lmText
	return p.em.take()
}

// decide looks at the start of the output (text; a marker token is
// Feed's). It returns what is left to run once the mode is known.
func (p *LlamaParser) decide(final bool) (string, bool) {
	h := p.head
	t := strings.TrimLeft(h, " \t\r\n")
	switch {
	case t == "":
		if final {
			p.mode = lmText
			return h, true
		}
		return "", false
	case p.prov.SpelledOpen && strings.HasPrefix(t, pythonTag):
		p.mode = lmBetween
		return t[len(pythonTag):], true
	case p.prov.SpelledOpen && strings.HasPrefix(pythonTag, t):
		if !final {
			return "", false
		}
	case p.prov.Unmarked && t[0] == '{':
		i := 1
		for i < len(t) && isWS(t[i]) {
			i++
		}
		const key = `"name"`
		rest := t[i:]
		switch {
		case strings.HasPrefix(rest, key):
			p.mode = lmBetween
			return t, true
		case strings.HasPrefix(key, rest) && !final:
			return "", false
		}
	}
	p.mode = lmText
	return h, true
}

func (p *LlamaParser) run(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch p.mode {
		case lmText:
			p.em.text(s[i:])
			return
		case lmBetween:
			switch {
			case isWS(c) || c == ';':
			case c == '{':
				p.call = callState{index: -1, sc: newObjScanner("parameters", "arguments")}
				p.mode = lmObject
				i--
			default:
				p.mode = lmText
				i--
			}
		case lmObject:
			sc := p.call.sc
			sc.feed(c)
			if sc.done() {
				p.em.finish(&p.call, string(sc.raw), "")
				p.mode = lmBetween
			} else if sc.failed() {
				p.em.finish(&p.call, string(sc.raw), "")
				p.mode = lmSkipLine
				if c == '\n' {
					p.mode = lmBetween
				}
			}
		case lmSkipLine:
			if c == '\n' {
				p.mode = lmBetween
			}
		}
	}
	if p.mode == lmObject {
		p.em.progress(&p.call)
	}
}
