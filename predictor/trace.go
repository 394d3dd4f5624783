package predictor

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// TraceRecord is one finished segment of a call — the generation from the
// call's start (or its resumption after a tool) up to its next tool call or
// its end — as the runtime logs it and the converters write it: one JSON
// object a line (JSONL). It is the predictor's training data.
type TraceRecord struct {
	FeatureVersion int    `json:"feature_version"`  // FeatureVersion of the writer
	Source         string `json:"source,omitempty"` // where the record comes from, e.g. "infercept-multi/hex", "bfcl/simple_python", "runtime"
	Program        string `json:"program,omitempty"`
	// Thread is the conversation of the program the segment belongs to,
	// where the writer tells them apart (the runtime: the request's thread,
	// else a hash of its opening messages); "" for one conversation per
	// program. A segment's history and blend are its conversation's
	// (ProgramBlends keys them by it).
	Thread  string `json:"thread,omitempty"`
	Segment int    `json:"segment"` // index of the segment in its program
	Input   Input  `json:"input"`
	// PreToolOutputTokens is what the classifier predicts: tokens generated
	// in this segment.
	PreToolOutputTokens int    `json:"pre_tool_output_tokens"`
	Tool                string `json:"tool,omitempty"` // tool called at the end of the segment; "" when the call ended
	// ToolArgs are the JSON arguments of that call, where the source has
	// them; the duration estimator reads them (ArgumentClass), the length
	// model never (they are the segment's own output).
	ToolArgs string `json:"tool_args,omitempty"`
	// ToolDurationS is the tool's duration in seconds; nil when unknown.
	ToolDurationS    *float64 `json:"tool_duration_s,omitempty"`
	ToolReturnTokens int      `json:"tool_return_tokens,omitempty"` // tokens the tool's result added
	// PredictedTokens is the length the runtime predicted for the segment
	// before it ran (the point policies saw); 0 where not recorded (the
	// dataset converters). Never a feature: it says what serve did, so
	// that a replay can be checked against it (ServedPoints).
	PredictedTokens int `json:"predicted_tokens,omitempty"`
	// TokensApprox marks token counts estimated from text rather than
	// counted by a tokenizer. The converters wrote it until they counted
	// with real tokenizers (TiktokenCounter); it stays so that their older
	// trace files still read.
	TokensApprox bool `json:"tokens_approx,omitempty"`
}

// AppendTrace writes rec as one JSON line to w. A zero FeatureVersion is
// filled with this build's.
func AppendTrace(w io.Writer, rec TraceRecord) error {
	if rec.FeatureVersion == 0 {
		rec.FeatureVersion = FeatureVersion
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("append trace: %w", err)
	}
	data = append(data, '\n')
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("append trace: %w", err)
	}
	return nil
}

// WriteTraces writes recs to path (JSONL, gzip-compressed when path ends in
// ".gz"), atomically.
func WriteTraces(path string, recs []TraceRecord) error {
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	for _, r := range recs {
		if err := AppendTrace(w, r); err != nil {
			return err
		}
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("write traces: %w", err)
		}
	}
	if err := writeFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("write traces: %w", err)
	}
	return nil
}

// ErrBadTrace is wrapped by ReadTraces's errors about file contents.
var ErrBadTrace = errors.New("bad trace")

// ReadTraces reads JSONL trace files (gzip-compressed when the name ends in
// ".gz"), in order. Blank lines are skipped. An
// empty file, a line that is not a trace record, or a record written for
// a feature version outside [OldestTraceVersion, FeatureVersion] is an error
// naming the file and line. A file with older records is upgraded with
// DeriveContext; every record's LastToolClass is derived from the order of
// the records (DeriveToolClasses), and so is a tree search's Retry
// (DeriveRetries).
func ReadTraces(paths ...string) ([]TraceRecord, error) {
	if len(paths) == 0 {
		return nil, errors.New("read traces: no trace files given")
	}
	var out []TraceRecord
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read traces: %w", err)
		}
		var r io.Reader = f
		if strings.HasSuffix(path, ".gz") {
			zr, err := gzip.NewReader(f)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%w: %s: %v", ErrBadTrace, path, err)
			}
			r = zr
		}
		recs, err := decodeTraces(r, path)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

func decodeTraces(r io.Reader, name string) ([]TraceRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var out []TraceRecord
	upgrade := false
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec TraceRecord
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrBadTrace, name, line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%w: %s:%d: more than one JSON value on the line", ErrBadTrace, name, line)
		}
		switch {
		case rec.FeatureVersion == 0:
			return nil, fmt.Errorf("%w: %s:%d: no feature_version (not a trace record?)", ErrBadTrace, name, line)
		case rec.FeatureVersion < OldestTraceVersion || rec.FeatureVersion > FeatureVersion:
			return nil, fmt.Errorf("%w: %s:%d: feature_version %d, this build reads %d to %d: convert the source again",
				ErrBadTrace, name, line, rec.FeatureVersion, OldestTraceVersion, FeatureVersion)
		case rec.PreToolOutputTokens < 0 || rec.Input.PromptTokens < 0:
			return nil, fmt.Errorf("%w: %s:%d: negative token count", ErrBadTrace, name, line)
		case rec.ToolDurationS != nil && !validSeconds(*rec.ToolDurationS):
			return nil, fmt.Errorf("%w: %s:%d: tool_duration_s %v is not a duration", ErrBadTrace, name, line, *rec.ToolDurationS)
		}
		upgrade = upgrade || rec.FeatureVersion < FeatureVersion
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s:%d: %v", ErrBadTrace, name, line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s: no trace records (empty file)", ErrBadTrace, name)
	}
	if upgrade {
		DeriveContext(out)
	}
	DeriveToolClasses(out)
	DeriveRetries(out)
	return out, nil
}
