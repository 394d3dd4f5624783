package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// manifest is one YAML document of a file.
type manifest struct {
	file string
	doc  map[string]any
}

func loadManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var out []manifest
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc map[string]any
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: not YAML: %v", f, err)
			}
			if doc != nil {
				out = append(out, manifest{f, doc})
			}
		}
	}
	return out
}

func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	f, err := os.Open("testdata/k8s-subset.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("k8s-subset.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("k8s-subset.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSON turns a YAML document into the values JSON decoding gives.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestManifestsValidate(t *testing.T) {
	s := schema(t)
	for _, m := range loadManifests(t) {
		if err := s.Validate(asJSON(t, m.doc)); err != nil {
			t.Errorf("%s: %s %v does not validate: %v", m.file, m.doc["kind"], get(m.doc, "metadata", "name"), err)
		}
	}
}

func TestSchemaCatchesMistakes(t *testing.T) {
	// The check must be able to fail: a misspelt field, a missing image and
	// a port out of range are each refused.
	s := schema(t)
	base := func() map[string]any {
		for _, m := range loadManifests(t) {
			if m.doc["kind"] == "Deployment" {
				return m.doc
			}
		}
		t.Fatal("no Deployment")
		return nil
	}
	for name, mutate := range map[string]func(d map[string]any){
		"misspelt field": func(d map[string]any) { d["spec"].(map[string]any)["replica"] = 2 },
		"no image": func(d map[string]any) {
			delete(container(d, 0), "image")
		},
		"port out of range": func(d map[string]any) {
			container(d, 0)["ports"] = []any{map[string]any{"containerPort": 70000}}
		},
		"wrong apiVersion": func(d map[string]any) { d["apiVersion"] = "v1" },
	} {
		d := base()
		mutate(d)
		if err := s.Validate(asJSON(t, d)); err == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}

func TestManifestsFitTogether(t *testing.T) {
	ms := loadManifests(t)
	byKind := map[string][]map[string]any{}
	for _, m := range ms {
		byKind[m.doc["kind"].(string)] = append(byKind[m.doc["kind"].(string)], m.doc)
	}
	// Every workload's selector matches its pod labels, and a Service
	// selects it.
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		for _, w := range byKind[kind] {
			sel := get(w, "spec", "selector", "matchLabels").(map[string]any)
			labels := get(w, "spec", "template", "metadata", "labels").(map[string]any)
			for k, v := range sel {
				if labels[k] != v {
					t.Errorf("%s %v: selector %s=%v does not match its pod labels %v", kind, get(w, "metadata", "name"), k, v, labels)
				}
			}
			if svc := serviceFor(byKind["Service"], labels); svc == nil {
				t.Errorf("%s %v: no Service selects its pods", kind, get(w, "metadata", "name"))
			}
		}
	}
	// The vLLM StatefulSet: a headless Service of its serviceName, and
	// priority scheduling on.
	var engines map[string]any
	for _, s := range byKind["StatefulSet"] {
		if strings.Contains(container(s, 0)["image"].(string), "vllm") {
			engines = s
		}
	}
	if engines == nil {
		t.Fatal("no vLLM StatefulSet")
	}
	svcName := get(engines, "spec", "serviceName")
	var headless map[string]any
	for _, s := range byKind["Service"] {
		if get(s, "metadata", "name") == svcName {
			headless = s
		}
	}
	if headless == nil || get(headless, "spec", "clusterIP") != "None" {
		t.Fatalf("the StatefulSet's serviceName %v is not a headless Service", svcName)
	}
	args := strings.Join(strings.Fields(strings.Trim(strings.ReplaceAll(toStrings(container(engines, 0)["args"]), "=", " "), " ")), " ")
	if !strings.Contains(args, "--scheduling-policy priority") {
		t.Errorf("vLLM runs without --scheduling-policy priority: the router's rank would not order its queue (%s)", args)
	}
	// The router finds the engines by the headless Service's DNS name, on
	// its port.
	var router map[string]any
	for _, d := range byKind["Deployment"] {
		if slices.Contains(strings.Fields(toStrings(container(d, 0)["args"])), "serve") {
			router = d
		}
	}
	if router == nil {
		t.Fatal("no router Deployment (a container running pitstop serve)")
	}
	port := get(headless, "spec", "ports").([]any)[0].(map[string]any)["port"]
	want := "--backend-dns=http://" + svcName.(string) + "." + get(headless, "metadata", "namespace").(string) + ".svc.cluster.local:" + jsonNumber(port)
	if !strings.Contains(toStrings(container(router, 0)["args"]), want) {
		t.Errorf("the router's args %s do not find the engines at %s", toStrings(container(router, 0)["args"]), want)
	}
}

func serviceFor(svcs []map[string]any, labels map[string]any) map[string]any {
	for _, s := range svcs {
		sel, ok := get(s, "spec", "selector").(map[string]any)
		if !ok || len(sel) == 0 {
			continue
		}
		match := true
		for k, v := range sel {
			match = match && labels[k] == v
		}
		if match {
			return s
		}
	}
	return nil
}

func get(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func container(d map[string]any, i int) map[string]any {
	return get(d, "spec", "template", "spec", "containers").([]any)[i].(map[string]any)
}

func toStrings(v any) string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, x := range list {
		out[i], _ = x.(string)
	}
	return strings.Join(out, " ")
}

func jsonNumber(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
