package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchClusterBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"zero replicas", []string{"--replicas", "0"}, []string{"invalid --replicas 0", "positive"}},
		{"balancers without replicas", []string{"--balancers", "autellix"}, []string{"invalid --replicas 0"}},
		{"unknown balancer", []string{"--replicas", "2", "--balancers", "round-robin,nope"}, []string{`unknown balancer "nope"`, "least-used", "pitstop"}},
		{"more profiles than replicas", []string{"--replicas", "1", "--profile", "a100-80g-llama3-8b,h100-80g-llama3-8b"}, []string{"2 profiles for 1 replicas", "a100-80g-llama3-8b"}},
		{"unknown replica profile", []string{"--replicas", "2", "--profile", "a100-80g-llama3-8b,tpu"}, []string{`unknown profile "tpu"`}},
		{"replicas on cpu", []string{"--replicas", "2", "--executor", "cpu"}, []string{"--replicas", "--executor sim"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantBenchBadInput(t, out, append([]string{"bench", "--workload", "chat", "--duration", "5", "--json", out}, c.args...), c.want)
		})
	}
}

func TestBenchClusterWritesReports(t *testing.T) {
	dir := t.TempDir()
	js, csv := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	code, stdout, stderr := pitstop(t, "bench", "--workload", "chat", "--policies", "plas", "--replicas", "3",
		"--profile", "a100-80g-llama3-8b,h100-80g-llama3-8b", "--balancers", "round-robin,autellix",
		"--rates", "1", "--duration", "20", "--json", js, "--csv", csv, "--out", filepath.Join(dir, "plots"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "plas/autellix") || !strings.Contains(stdout, "2x a100-80g-llama3-8b + 1x h100-80g-llama3-8b") {
		t.Fatalf("table does not name the balancers and replicas: %q", stdout)
	}
	var rep struct {
		Profile string
		Runs    []struct {
			Balancer      string
			Replicas      int
			Requests      int
			Completed     int
			PrefixHitRate float64   `json:"prefix_hit_rate"`
			ReplicaUtil   []float64 `json:"replica_util"`
		}
	}
	readJSON(t, js, &rep)
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(rep.Runs))
	}
	for i, r := range rep.Runs {
		if r.Balancer != []string{"round-robin", "autellix"}[i] || r.Replicas != 3 || len(r.ReplicaUtil) != 3 ||
			r.Requests == 0 || r.Completed != r.Requests || r.PrefixHitRate <= 0 || r.PrefixHitRate > 1 {
			t.Fatalf("run %d: %+v", i, r)
		}
	}
	data, err := os.ReadFile(csv)
	if err != nil || !strings.Contains(string(data), "replica_util") {
		t.Fatalf("csv without the cluster columns (%v)", err)
	}
}

// --sustained with --replicas searches each policy/balancer pair's highest
// sustained rate on the replicas. It starts at a light rate: a 100 s window
// judges the throughput on a few hundred programs, so near the bar the
// verdict is noise (the pitstop balancer failed 4 programs/s at 0.978).
func TestBenchSustainedOverReplicas(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "s.json")
	code, stdout, stderr := pitstop(t, "bench", "--sustained", "--workload", "infercept-single", "--policies", "plas",
		"--replicas", "2", "--profile", "a100-80g-llama3-8b", "--balancers", "round-robin,pitstop", "--duration", "100", "--sustained-warmup", "20",
		"--sustained-drain", "30", "--sustained-seeds", "1", "--sustained-start", "1", "--sustained-resolution", "2",
		"--parallel", "2", "--json", js, "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "plas/pitstop") || !strings.Contains(stdout, "2x a100-80g-llama3-8b") || !strings.Contains(stderr, "sustained search plas/round-robin seed 1") {
		t.Fatalf("stdout %q, stderr %q", stdout, stderr)
	}
	var rep struct {
		Profile  string
		Replicas int
		Policies []struct {
			Policy        string
			SustainedRate float64 `json:"sustained_rate"`
			Seeds         []struct {
				Trials []struct {
					Run struct {
						Balancer string
						Replicas int
					}
				}
			}
		}
	}
	readJSON(t, js, &rep)
	if rep.Replicas != 2 || len(rep.Policies) != 2 {
		t.Fatalf("report: %d replicas, %d series", rep.Replicas, len(rep.Policies))
	}
	for i, p := range rep.Policies {
		bal := []string{"round-robin", "pitstop"}[i]
		if p.Policy != "plas/"+bal || !(p.SustainedRate > 0) || len(p.Seeds) != 1 || len(p.Seeds[0].Trials) < 2 {
			t.Fatalf("series %d: %+v", i, p)
		}
		for _, tr := range p.Seeds[0].Trials {
			if tr.Run.Balancer != bal || tr.Run.Replicas != 2 {
				t.Fatalf("%s: a trial ran with balancer %q on %d replicas", p.Policy, tr.Run.Balancer, tr.Run.Replicas)
			}
		}
	}
}
