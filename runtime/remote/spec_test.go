package remote

import (
	"strings"
	"testing"
)

func TestParseSpecs(t *testing.T) {
	specs, err := ParseSpecs([]string{"http://a:8000/v1,kind=vllm,max-inflight=16,weight=2,http://b:9000,transport=nethttp", "https://c.example/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 {
		t.Fatalf("got %d specs: %+v", len(specs), specs)
	}
	a := specs[0]
	if a.URL != "http://a:8000" || a.Kind != KindVLLM || a.MaxInflight != 16 || a.Weight != 2 || a.Name() != "a:8000" {
		t.Errorf("first spec %+v", a)
	}
	if b := specs[1]; b.URL != "http://b:9000" || b.Kind != KindOpenAI || b.Weight != 1 || b.MaxInflight != 0 || b.Transport != TransportNetHTTP {
		t.Errorf("second spec %+v", b)
	}
	if c := specs[2]; c.URL != "https://c.example" {
		t.Errorf("third spec %+v", c)
	}
}

func TestParseSpecsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"ftp://a":                      "malformed URL",
		"http://":                      "malformed URL",
		"http://a:1?x=1":               "malformed URL",
		"kind=vllm":                    "before any URL",
		"http://a:1,kind=tgi":          "unknown kind",
		"http://a:1,weight=0":          "weight",
		"http://a:1,weight=x":          "weight",
		"http://a:1,max-inflight=-1":   "max-inflight",
		"http://a:1,colour=red":        "unknown option",
		"http://a:1,http://a:1":        "twice",
		"http://a:1,api-key-env=":      "api-key-env",
		"http://a:1,kind=vllm,kind=sg": "unknown kind",
		"http://a:1,transport=fast":    "not a transport",
		"https://a:1,transport=inline": "https backend",
	} {
		_, err := ParseSpecs([]string{in})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one saying %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error of more than one line: %q", in, err)
		}
	}
}
