package predictor

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// FeatureVersion names the layout that Featurize writes. It is stored in every
// exported model's metadata (key MetaFeatureVersion) and in every trace record;
// a model trained on another layout is refused at load time. Bump it whenever
// Featurize changes what any dimension means.
//
// Version 2 adds what carries signal across agents and is known before the
// segment runs: the kind of the last message (user text or the result of
// which tool), its length, the position in the program, the running output
// lengths per kind of segment (ending in a tool call or in a reply), the size
// of the offered tools' schemas, and a hashed cross of (kind, last tool,
// segments so far), the lookup a conditional median would use.
const FeatureVersion = 2

// Layout of the feature vector (FeatureVersion 2). Each hashed block holds
// signed feature-hashing counts (the sign comes from another bit of the same
// hash, so collisions cancel on average) and is then scaled to unit L2 norm.
const (
	sysDims    = 128 // unigrams + bigrams of the system prompt
	msgDims    = 512 // unigrams + bigrams of the last user/tool message
	toolDims   = 64  // names of the tools offered
	calledDims = 32  // names of the tools the program already called
	lastDims   = 32  // name of the tool whose result is the last message
	crossDims  = 64  // (last message kind, last tool, segments so far)
	kindDims   = 2   // one-hot: last message is user text, is a tool result
	numDims    = 16  // scalar features, see Featurize
	bucketDims = 16  // one-hot of log2 buckets

	sysOff    = 0
	msgOff    = sysOff + sysDims
	toolOff   = msgOff + msgDims
	calledOff = toolOff + toolDims
	lastOff   = calledOff + calledDims
	crossOff  = lastOff + lastDims
	kindOff   = crossOff + crossDims
	numOff    = kindOff + kindDims
	promptOff = numOff + numDims
	prevOff   = promptOff + bucketDims // last output length
	msgLenOff = prevOff + bucketDims   // last message length in bytes
	callsOff  = msgLenOff + bucketDims // segments so far

	// FeatureDim is the length of the vector Featurize writes.
	FeatureDim = callsOff + bucketDims
)

// MaxTextBytes caps how much of each text Featurize reads (the first bytes of
// the system prompt and of the last message), so that featurizing costs a
// bounded time whatever the prompt.
const MaxTextBytes = 8192

// Input is what the runtime knows about a call when it asks for a prediction:
// everything before the model generates the segment that ends in a tool call
// (or in the end of the call). Nothing in it may depend on the segment itself
// (the tool it will call, what it will write): TestFeaturesDoNotLeak.
type Input struct {
	SystemPrompt string   `json:"system_prompt,omitempty"`
	LastMessage  string   `json:"last_message,omitempty"` // the last user or tool message
	ToolNames    []string `json:"tool_names,omitempty"`   // tools offered to the model
	PromptTokens int      `json:"prompt_tokens"`          // the whole context, in tokens
	// LastTool is the tool whose result is the last message; "" when the
	// last message is the user's (feature version 2).
	LastTool string `json:"last_tool,omitempty"`
	// LastToolClass is the argument class (ArgumentClass: a shell command's
	// program, a URL's host) of the call whose result is the last message;
	// "" when unknown. Known before the segment (it is the previous
	// segment's output); the length model's features do not read it,
	// WindowModes does.
	LastToolClass string `json:"last_tool_class,omitempty"`
	// ToolSchemaBytes is the size of the offered tools' JSON schemas (0 when
	// unknown; feature version 2).
	ToolSchemaBytes int `json:"tool_schema_bytes,omitempty"`
	// Retry says that the request goes back to an earlier point of its
	// conversation than the turn the model last generated there: it
	// carries no more of the model's turns than the conversation's
	// previous request did (a tree search trying another branch, an agent
	// retrying a step). Known before the segment (it is what the request's
	// messages hold); a conversation's restart from its opening is not a
	// retry (Restarts). The length model's features do not read it;
	// ProgramBlend keeps retries apart from continuations.
	Retry   bool    `json:"retry,omitempty"`
	History History `json:"history"`
}

// History summarises the program's earlier segments (earlier calls, and earlier
// segments of this call that ended in tool calls).
type History struct {
	Calls            int      `json:"calls"`                  // segments generated so far in this program
	MeanOutputTokens float64  `json:"mean_output_tokens"`     // mean pre-tool output length of those
	LastOutputTokens float64  `json:"last_output_tokens"`     // pre-tool output length of the last one
	ToolsCalled      []string `json:"tools_called,omitempty"` // tools called so far (repeats allowed)
	// Running means per kind of segment (feature version 2): those that
	// ended in a tool call, and those that ended the call (replies).
	MeanToolCallTokens float64 `json:"mean_tool_call_tokens,omitempty"`
	Replies            int     `json:"replies,omitempty"`
	MeanReplyTokens    float64 `json:"mean_reply_tokens,omitempty"`
}

// Observe returns h updated with one more finished segment of outputTokens
// tokens that ended in tool ("" when it ended the call). It does not modify h's
// ToolsCalled backing array beyond appending.
func (h History) Observe(outputTokens int, tool string) History {
	n := float64(h.Calls)
	h.MeanOutputTokens = (h.MeanOutputTokens*n + float64(outputTokens)) / (n + 1)
	h.LastOutputTokens = float64(outputTokens)
	h.Calls++
	if tool != "" {
		k := float64(len(h.ToolsCalled))
		h.MeanToolCallTokens = (h.MeanToolCallTokens*k + float64(outputTokens)) / (k + 1)
		h.ToolsCalled = append(h.ToolsCalled[:len(h.ToolsCalled):len(h.ToolsCalled)], tool)
	} else {
		k := float64(h.Replies)
		h.MeanReplyTokens = (h.MeanReplyTokens*k + float64(outputTokens)) / (k + 1)
		h.Replies++
	}
	return h
}

// Featurize writes the features of in into dst[:FeatureDim] (dst must have at
// least FeatureDim elements; it panics otherwise). It allocates nothing.
//
// Layout (FeatureVersion 2):
//
//	[0,128)    hashed lowercase word unigrams and bigrams of SystemPrompt
//	[128,640)  the same for LastMessage
//	[640,704)  hashed tool names offered (ToolNames)
//	[704,736)  hashed tool names called so far (History.ToolsCalled)
//	[736,768)  hashed LastTool
//	[768,832)  hashed cross of (LastTool or user text, min(History.Calls, 8))
//	[832,834)  one-hot: last message is user text, is a tool result
//	[834,850)  scalars: ln(1+PromptTokens)/8, ln(1+words(LastMessage))/8,
//	           ln(1+words(SystemPrompt))/8, ln(1+len(ToolNames))/3,
//	           ln(1+History.Calls)/4, [History.Calls>0],
//	           ln(1+MeanOutputTokens)/7, ln(1+LastOutputTokens)/7,
//	           [tool-call segments>0], ln(1+MeanToolCallTokens)/7,
//	           [replies>0], ln(1+MeanReplyTokens)/7, ln(1+ToolSchemaBytes)/10,
//	           ln(1+len(LastMessage))/10, ln(1+len(ToolsCalled))/4,
//	           ln(1+History.Replies)/3
//	[850,866)  one-hot of floor(log2(1+PromptTokens)), capped at 15
//	[866,882)  one-hot of floor(log2(1+LastOutputTokens)) (all zero before the first segment)
//	[882,898)  one-hot of floor(log2(1+len(LastMessage))/1.5)
//	[898,914)  one-hot of History.Calls, capped at 15
//
// Words are maximal runs of letters and digits, lowercased; at most the first
// MaxTextBytes bytes of each text are read.
func Featurize(in Input, dst []float32) {
	dst = dst[:FeatureDim]
	clear(dst)

	sysWords := hashText(in.SystemPrompt, dst[sysOff:sysOff+sysDims])
	msgWords := hashText(in.LastMessage, dst[msgOff:msgOff+msgDims])
	for _, name := range in.ToolNames {
		addHashed(dst[toolOff:toolOff+toolDims], hashString(name))
	}
	normalize(dst[toolOff : toolOff+toolDims])
	for _, name := range in.History.ToolsCalled {
		addHashed(dst[calledOff:calledOff+calledDims], hashString(name))
	}
	normalize(dst[calledOff : calledOff+calledDims])

	h := in.History
	calls := min(max(h.Calls, 0), bucketDims-1)
	last := uint64(0x75736572) // "user": the last message is user text
	if in.LastTool != "" {
		last = hashString(in.LastTool)
		dst[lastOff+int((last>>1)%lastDims)] = 1
		dst[kindOff+1] = 1
	} else {
		dst[kindOff] = 1
	}
	cross := mix64(last ^ mix64(uint64(min(calls, 8))+1))
	dst[crossOff+int((cross>>1)%crossDims)] = 1

	num := dst[numOff : numOff+numDims]
	num[0] = lnScaled(float64(max(in.PromptTokens, 0)), 8)
	num[1] = lnScaled(float64(msgWords), 8)
	num[2] = lnScaled(float64(sysWords), 8)
	num[3] = lnScaled(float64(len(in.ToolNames)), 3)
	num[4] = lnScaled(float64(max(h.Calls, 0)), 4)
	if h.Calls > 0 {
		num[5] = 1
		num[6] = lnScaled(max(h.MeanOutputTokens, 0), 7)
		num[7] = lnScaled(max(h.LastOutputTokens, 0), 7)
		dst[prevOff+log2Bucket(h.LastOutputTokens)] = 1
	}
	if len(h.ToolsCalled) > 0 {
		num[8] = 1
		num[9] = lnScaled(max(h.MeanToolCallTokens, 0), 7)
	}
	if h.Replies > 0 {
		num[10] = 1
		num[11] = lnScaled(max(h.MeanReplyTokens, 0), 7)
	}
	num[12] = lnScaled(float64(max(in.ToolSchemaBytes, 0)), 10)
	num[13] = lnScaled(float64(len(in.LastMessage)), 10)
	num[14] = lnScaled(float64(len(h.ToolsCalled)), 4)
	num[15] = lnScaled(float64(max(h.Replies, 0)), 3)
	dst[promptOff+log2Bucket(float64(in.PromptTokens))] = 1
	dst[msgLenOff+min(int(math.Log2(1+float64(len(in.LastMessage)))/1.5), bucketDims-1)] = 1
	dst[callsOff+calls] = 1
}

func lnScaled(x, div float64) float32 { return float32(math.Log1p(x) / div) }

// log2Bucket is floor(log2(1+x)) clamped to [0, bucketDims).
func log2Bucket(x float64) int {
	if !(x > 0) {
		return 0
	}
	b := int(math.Log2(1 + x))
	return min(max(b, 0), bucketDims-1)
}

// FNV-1a, 64 bit.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return mix64(h)
}

// mix64 is the splitmix64 finalizer: it spreads FNV's low-entropy low bits.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// addHashed adds ±1 to the bucket that h selects.
func addHashed(block []float32, h uint64) {
	i := int((h >> 1) % uint64(len(block)))
	if h&1 == 0 {
		block[i]++
	} else {
		block[i]--
	}
}

// hashText adds the word unigrams and bigrams of s to block, normalises it and
// returns the number of words read.
func hashText(s string, block []float32) int {
	if len(s) > MaxTextBytes {
		s = s[:MaxTextBytes]
	}
	words := 0
	var prev uint64
	havePrev := false
	inWord := false
	h := uint64(fnvOffset)
	flush := func() {
		w := mix64(h)
		addHashed(block, w)
		if havePrev {
			// Bigram: order-dependent combination of the two word hashes.
			addHashed(block, mix64(prev*0x9e3779b97f4a7c15^w))
		}
		prev, havePrev = w, true
		words++
		h = fnvOffset
		inWord = false
	}
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
		if r < utf8.RuneSelf {
			c := byte(r)
			switch {
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			default:
				if inWord {
					flush()
				}
				continue
			}
			h ^= uint64(c)
			h *= fnvPrime
			inWord = true
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if inWord {
				flush()
			}
			continue
		}
		r = unicode.ToLower(r)
		// Hash the rune's value in 3 bytes (all of Unicode fits in 21 bits).
		for shift := 16; shift >= 0; shift -= 8 {
			h ^= uint64(byte(r >> shift))
			h *= fnvPrime
		}
		inWord = true
	}
	if inWord {
		flush()
	}
	normalize(block)
	return words
}

// normalize scales block to unit L2 norm (an all-zero block stays zero).
func normalize(block []float32) {
	var ss float64
	for _, v := range block {
		ss += float64(v) * float64(v)
	}
	if ss == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range block {
		block[i] *= inv
	}
}
