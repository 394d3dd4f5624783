package chat

import "strings"

const (
	openTag  = "<tool_call>"
	closeTag = "</tool_call>"
)

// HermesParser parses Hermes-style tool calls, as Qwen2.5 and other ChatML
// models write them:
//
//	<tool_call>
//	{"name": "get_weather", "arguments": {"city": "Paris"}}
//	</tool_call>
//
// Text outside the tags is content, emitted as soon as it cannot be the
// start of a tag. A call's name is emitted once its string closes and its
// arguments stream as they arrive. The first "</tool_call>" ends a call, as
// in vLLM's hermes parser; a call left open when the output ends is
// accepted if its JSON is complete. "parameters" is read like "arguments";
// arguments given as a JSON string holding an object are unwrapped.
type HermesParser struct {
	em     emitter
	buf    string
	inCall bool
	call   callState
	body   strings.Builder
}

// NewHermesParser returns a parser for one assistant turn.
func NewHermesParser(opts ...ParserOption) *HermesParser {
	return &HermesParser{em: emitter{cfg: newConfig(opts)}}
}

// Feed implements ToolCallParser.
func (p *HermesParser) Feed(delta string) []Event {
	p.buf += delta
	p.process(false)
	return p.em.take()
}

// Close implements ToolCallParser.
func (p *HermesParser) Close() []Event {
	p.process(true)
	if p.inCall {
		p.endCall(false)
	}
	return p.em.take()
}

// heldPrefix is the length of the longest suffix of s that is a proper
// prefix of tag: the bytes that might still become the tag.
func heldPrefix(s, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}

func (p *HermesParser) process(final bool) {
	for {
		if !p.inCall {
			if i := strings.Index(p.buf, openTag); i >= 0 {
				p.em.text(p.buf[:i])
				p.buf = p.buf[i+len(openTag):]
				p.inCall = true
				p.call = callState{index: -1, sc: newObjScanner("arguments", "parameters")}
				p.body.Reset()
				continue
			}
			k := 0
			if !final {
				k = heldPrefix(p.buf, openTag)
			}
			p.em.text(p.buf[:len(p.buf)-k])
			p.buf = p.buf[len(p.buf)-k:]
			return
		}
		if i := strings.Index(p.buf, closeTag); i >= 0 {
			p.feedCall(p.buf[:i])
			p.buf = p.buf[i+len(closeTag):]
			p.endCall(true)
			continue
		}
		k := 0
		if !final {
			k = heldPrefix(p.buf, closeTag)
		}
		p.feedCall(p.buf[:len(p.buf)-k])
		p.buf = p.buf[len(p.buf)-k:]
		return
	}
}

func (p *HermesParser) feedCall(s string) {
	if s == "" {
		return
	}
	p.body.WriteString(s)
	sc := p.call.sc
	for i := 0; i < len(s); i++ {
		if sc.done() || sc.failed() {
			break
		}
		sc.feed(s[i])
	}
	p.em.progress(&p.call)
}

func (p *HermesParser) endCall(closed bool) {
	body := p.body.String()
	raw := openTag + body
	if closed {
		raw += closeTag
	}
	// The object's own bytes end where the scanner stopped; the rest of
	// the body must be blank.
	trailing := ""
	if p.call.sc.done() {
		trailing = body[len(p.call.sc.raw):]
	}
	p.em.finish(&p.call, raw, trailing)
	p.inCall = false
}
