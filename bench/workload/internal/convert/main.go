// Command convert prepares the embedded data of bench/workload offline, so that the runtime
// needs neither ../shared nor a tokenizer.
//
// Generate mode (what `go generate ./bench/workload` runs, from bench/workload):
//
//	go run ./internal/convert -shared ../../../shared/data -data data
//
// reads the shared traces, counts the tokens of the InferCept sets' text segments with the
// GPT-2 byte-level BPE (r50k_base ranks, the vocabulary and pre-tokenizer GPT-J uses), and
// writes into -data:
//
//	infercept_multi_counts.json.gz, infercept_single_counts.json.gz  counts only, with "tool"
//	infercept_multi.json.gz, infercept_single.json.gz                the original text-bearing files
//	mooncake_conversation_trace.jsonl.gz, azure_conv.csv.gz, azure_code.csv.gz
//
// File mode converts a user's own text-bearing InferCept-format trace into counts that
// workload.LoadFile accepts:
//
//	go run ./bench/workload/internal/convert -in trace.json -out trace_counts.json
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pitstop-llm/pitstop/bench/workload/infercept"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

func main() {
	shared := flag.String("shared", "", "shared data folder (generate mode)")
	dataDir := flag.String("data", "data", "output folder of generate mode")
	in := flag.String("in", "", "an InferCept-format trace to convert (file mode)")
	out := flag.String("out", "", "where file mode writes the counts (.gz compresses); default stdout")
	flag.Parse()
	log.SetFlags(0)

	enc, err := encoder()
	if err != nil {
		log.Fatal(err)
	}
	switch {
	case *in != "":
		src, err := os.ReadFile(*in)
		if err != nil {
			log.Fatal(err)
		}
		counts, st, err := convert(src, enc)
		if err != nil {
			log.Fatalf("%s: %v", *in, err)
		}
		log.Printf("%s: %s", *in, st)
		if *out == "" {
			_, err = os.Stdout.Write(counts)
		} else {
			err = writeFile(*out, counts)
		}
		if err != nil {
			log.Fatal(err)
		}
	case *shared != "":
		if err := generate(*shared, *dataDir, enc); err != nil {
			log.Fatal(err)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// encoder returns the GPT-2 byte-level BPE. tiktoken-go has no "gpt2" encoding of its own;
// r50k_base has the same 50,257 ranks and the same pre-tokenizing pattern, and the offline
// loader embeds its rank file, so nothing is downloaded.
func encoder() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	return tiktoken.GetEncoding(tiktoken.MODEL_R50K_BASE)
}

type stats struct {
	requests, segments, textSegments, pairs, mismatches, maxDiff int
}

func (s stats) String() string {
	return fmt.Sprintf("%d requests, %d segments (%d with text, tokenized); %d of %d consecutive text segment pairs have prompt(i+1) != prompt(i)+completion(i)+api_token(i) in tokens (largest difference %d)",
		s.requests, s.segments, s.textSegments, s.mismatches, s.pairs, s.maxDiff)
}

// convert turns a trace into its counts-only form, keeping request order, with a "tool"
// name on every segment that calls one.
func convert(src []byte, enc *tiktoken.Tiktoken) ([]byte, stats, error) {
	reqs, err := infercept.Parse(src)
	if err != nil {
		return nil, stats{}, err
	}
	count := func(s *string) int { return len(enc.EncodeOrdinary(*s)) }
	var st stats
	var b bytes.Buffer
	b.WriteString("{\n")
	for ri, r := range reqs {
		st.requests++
		prevExpect := -1
		key, _ := jsonString(r.Key)
		b.WriteString(key + ": [")
		for si := range r.Segments {
			s := &r.Segments[si]
			st.segments++
			tool := ""
			if s.APITime != nil {
				tool = infercept.ToolName(r.Key, s)
			}
			p, c, a := s.PromptTokens, s.CompletionTokens, s.APITokenLength
			if s.HasText() {
				st.textSegments++
				if p == nil && s.Prompt != nil {
					p = ptr(count(s.Prompt))
				}
				if c == nil && s.Completion != nil {
					c = ptr(count(s.Completion))
				}
				if a == nil && s.APIToken != nil {
					a = ptr(count(s.APIToken))
				}
				if prevExpect >= 0 && p != nil {
					st.pairs++
					if d := *p - prevExpect; d != 0 {
						st.mismatches++
						st.maxDiff = max(st.maxDiff, abs(d))
					}
				}
				prevExpect = -1
				if p != nil && c != nil && a != nil {
					prevExpect = *p + *c + *a
				}
			}
			if si > 0 {
				b.WriteString(", ")
			}
			var f []string
			if p != nil {
				f = append(f, `"prompt_tokens": `+strconv.Itoa(*p))
			}
			if c != nil {
				f = append(f, `"completion_tokens": `+strconv.Itoa(*c))
			}
			if s.APITime != nil {
				f = append(f, `"api_time": `+strconv.FormatFloat(*s.APITime, 'g', -1, 64))
			}
			if a != nil {
				f = append(f, `"api_token_length": `+strconv.Itoa(*a))
			}
			if tool != "" {
				t, _ := jsonString(tool)
				f = append(f, `"tool": `+t)
			}
			b.WriteString("{" + strings.Join(f, ", ") + "}")
		}
		b.WriteString("]")
		if ri < len(reqs)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), st, nil
}

func generate(shared, dataDir string, enc *tiktoken.Tiktoken) error {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct{ src, name string }{
		{"infercept/merged_exp_uniform.json", "infercept_multi"},
		{"infercept/diverse_oneapi_merged_exp_uniform.json", "infercept_single"},
	} {
		src, err := os.ReadFile(filepath.Join(shared, f.src))
		if err != nil {
			return err
		}
		counts, st, err := convert(src, enc)
		if err != nil {
			return fmt.Errorf("%s: %w", f.src, err)
		}
		log.Printf("%s: %s", f.src, st)
		if err := writeFile(filepath.Join(dataDir, f.name+"_counts.json.gz"), counts); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dataDir, f.name+".json.gz"), src); err != nil {
			return err
		}
	}
	for _, f := range []struct{ src, name string }{
		{"mooncake/conversation_trace.jsonl", "mooncake_conversation_trace.jsonl.gz"},
		{"azure-2023/AzureLLMInferenceTrace_conv.csv", "azure_conv.csv.gz"},
		{"azure-2023/AzureLLMInferenceTrace_code.csv", "azure_code.csv.gz"},
	} {
		src, err := os.ReadFile(filepath.Join(shared, f.src))
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dataDir, f.name), src); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes data, gzipped (best compression, no name or time in the header, so the
// output is reproducible) when the name ends in .gz.
func writeFile(name string, data []byte) error {
	if !strings.HasSuffix(name, ".gz") {
		return os.WriteFile(name, data, 0o644)
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := io.Copy(zw, bytes.NewReader(data)); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(name, b.Bytes(), 0o644)
}

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

func ptr(v int) *int { return &v }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
