package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// MooncakeBlock is the number of tokens behind one Mooncake hash id.
const MooncakeBlock = 512

// MooncakeConv is the Mooncake (FAST'25) conversation trace: 12,031 timestamped requests
// over about an hour, no tools. One Program with one Call per record; Arrival =
// timestamp/1000 s; one Segment with Decode = output_length.
//
// Prompt accounting: hash_ids name the 512-token blocks of the prompt, the last one partial
// unless input_length is a multiple of 512 (len(hash_ids) = ceil(input_length/512) in every
// record). SharedPrefix holds the ids of the full blocks, floor(input_length/512) of them, and
// NewTokens = input_length - 512·len(SharedPrefix) is the partial tail (0 to 511 tokens), so the
// prompt is exactly input_length tokens. The tail's id is not kept: 214 records share their
// partial last block with another record (identical repeated prompts); their tails are
// replayed as unique tokens.
func MooncakeConv() (*Workload, error) {
	data, err := readData("mooncake_conversation_trace.jsonl.gz")
	if err != nil {
		return nil, err
	}
	w, err := parseMooncake("mooncake-conv", data)
	if err != nil {
		return nil, fmt.Errorf("embedded mooncake-conv: %w", err)
	}
	w.Description = "Mooncake conversation trace (FAST'25): 12,031 requests with shared 512-token prefix blocks, real arrivals"
	return w, nil
}

type mooncakeRecord struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      []uint64 `json:"hash_ids"`
}

func parseMooncake(name string, data []byte) (*Workload, error) {
	w := &Workload{Name: name, Timestamped: true}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var r mooncakeRecord
		if err := json.Unmarshal(text, &r); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if r.Timestamp == nil || r.InputLength == nil || r.OutputLength == nil {
			return nil, fmt.Errorf("line %d: needs timestamp, input_length and output_length", line)
		}
		in := *r.InputLength
		if in <= 0 || in > MaxTokens || *r.OutputLength < 0 {
			return nil, fmt.Errorf("line %d: input_length %d / output_length %d out of range", line, in, *r.OutputLength)
		}
		full := min(in/MooncakeBlock, len(r.HashIDs))
		w.Programs = append(w.Programs, Program{
			ID:      fmt.Sprintf("mc-%05d", len(w.Programs)),
			Arrival: *r.Timestamp / 1000,
			Calls: []Call{{
				ID: "c0", Thread: "main",
				SharedPrefix: r.HashIDs[:full], SharedPrefixBlock: MooncakeBlock,
				NewTokens: in - full*MooncakeBlock,
				Segments:  []Segment{{Decode: *r.OutputLength}},
			}},
		})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}

// AzureConv is the Azure LLM inference trace of the conversation service (Splitwise,
// ISCA'24; CC-BY-4.0): 19,366 requests in one hour, no tools. One Program with one Call per
// row; Arrival = TIMESTAMP - the first row's TIMESTAMP; NewTokens = ContextTokens; one Segment
// with Decode = GeneratedTokens.
func AzureConv() (*Workload, error) {
	return loadAzure("azure-conv", "azure_conv.csv.gz", "Azure LLM inference trace 2023, conversation (Splitwise, ISCA'24): 19,366 requests, real arrivals")
}

// AzureCode is the Azure trace of the coding service: 8,819 requests in one hour, mapped as
// AzureConv.
func AzureCode() (*Workload, error) {
	return loadAzure("azure-code", "azure_code.csv.gz", "Azure LLM inference trace 2023, code (Splitwise, ISCA'24): 8,819 requests, real arrivals")
}

func loadAzure(name, file, desc string) (*Workload, error) {
	data, err := readData(file)
	if err != nil {
		return nil, err
	}
	w, err := parseAzure(name, data)
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", name, err)
	}
	w.Description = desc
	return w, nil
}

// azureTime is the trace's timestamp layout (fractional seconds optional).
const azureTime = "2006-01-02 15:04:05.999999999"

func parseAzure(name string, data []byte) (*Workload, error) {
	r := csv.NewReader(bytes.NewReader(data))
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	if strings.Join(head, ",") != "TIMESTAMP,ContextTokens,GeneratedTokens" {
		return nil, fmt.Errorf("header %q: want TIMESTAMP,ContextTokens,GeneratedTokens", strings.Join(head, ","))
	}
	w := &Workload{Name: name, Timestamped: true}
	var t0 time.Time
	for row := 2; ; row++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		t, err := time.Parse(azureTime, rec[0])
		if err != nil {
			return nil, fmt.Errorf("row %d: TIMESTAMP: %v", row, err)
		}
		ctx, err1 := strconv.Atoi(rec[1])
		gen, err2 := strconv.Atoi(rec[2])
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("row %d: %v", row, err)
		}
		if len(w.Programs) == 0 {
			t0 = t
		}
		w.Programs = append(w.Programs, Program{
			ID:      fmt.Sprintf("az-%05d", len(w.Programs)),
			Arrival: t.Sub(t0).Seconds(),
			Calls: []Call{{
				ID: "c0", Thread: "main", NewTokens: ctx,
				Segments: []Segment{{Decode: gen}},
			}},
		})
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}
