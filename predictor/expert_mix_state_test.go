package predictor

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// feedMix observes n rounds of a stream on x: first segments the model
// misses, later ones whose order the blend gets and the model does not.
func feedMix(x *ExpertMix, from, n int) {
	for i := from; i < from+n; i++ {
		actual := 20 + (i*37)%200
		x.Observe(ProgramBlend{}, 100, 100, 30+i%7)
		b := ProgramBlend{}.Observe(actual, actual, "t")
		x.Observe(b, 300-actual, actual+3, actual)
	}
}

// A mixture saved and restored predicts as the one saved, and goes on
// learning the same way (its order ring is restored too).
func TestExpertMixSaveRestore(t *testing.T) {
	dir := t.TempDir()
	x := OrderScored(41)
	feedMix(x, 0, 150)
	if err := x.Save(dir); err != nil {
		t.Fatal(err)
	}
	y := OrderScored(41)
	if found, err := y.Restore(dir); err != nil || !found {
		t.Fatalf("restore: found %v, %v", found, err)
	}
	fresh := OrderScored(41)
	probs := make([]float32, NumClasses)
	probs[BinOf(90)], probs[BinOf(250)] = 0.6, 0.4
	later := ProgramBlend{}.Observe(120, 150, "t")
	same := func(what string, want bool) {
		t.Helper()
		for _, b := range []ProgramBlend{{}, later} {
			n1, d1, _ := x.Predict(b, 90, probs, 1000)
			n2, d2, _ := y.Predict(b, 90, probs, 1000)
			n3, d3, _ := fresh.Predict(b, 90, probs, 1000)
			if n1 != n2 || !slices.Equal(d1, d2) {
				t.Fatalf("%s: restored predicts %d, the saved one %d", what, n2, n1)
			}
			if want && n3 == n1 && slices.Equal(d3, d1) {
				t.Fatalf("%s: a fresh mixture predicts the same (%d): the test cannot tell a restore from none", what, n3)
			}
		}
		w1f, w1l := x.Weights()
		w2f, w2l := y.Weights()
		if w1f != w2f || w1l != w2l {
			t.Fatalf("%s: weights %v %v after restore, %v %v before", what, w2f, w2l, w1f, w1l)
		}
	}
	same("after restore", true)
	feedMix(x, 150, 40)
	feedMix(y, 150, 40)
	same("after 40 more rounds on both", true)
}

// A corrupt or foreign file is an error that leaves the mixture as it was;
// no file is not an error.
func TestExpertMixRestoreRejects(t *testing.T) {
	if found, err := OrderScored(41).Restore(t.TempDir()); found || err != nil {
		t.Fatalf("empty directory: found %v, %v", found, err)
	}
	saved := t.TempDir()
	x := OrderScored(41)
	feedMix(x, 0, 50)
	if err := x.Save(saved); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(saved, ExpertMixStateFile))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(key string, v any) string {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		m[key] = v
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	cases := []struct {
		name string
		mix  *ExpertMix
		data string
		want string
	}{
		{"truncated", OrderScored(41), string(good[:len(good)/2]), "unexpected end"},
		{"not JSON", OrderScored(41), "\x00\x01garbage", "invalid character"},
		{"another kind", OrderScored(41), `{"kind":"pitstop.durations","version":1}`, "not a version-1"},
		{"negative sum", OrderScored(41), strings.Replace(string(good), `"loss":[[`, `"loss":[[-`, 1), "negative"},
		{"another model", OrderScored(77), string(good), "training median 41"},
		{"other scoring", NewExpertMix(41), string(good), "by order=true"},
		{"fractional count", OrderScored(41), edit("n", [][]float64{{0.5, 1, 1}, {1, 1, 1}}), "not whole"},
		{"endless error", OrderScored(41), edit("loss", [][]float64{{1e300, 0, 0}, {0, 0, 0}}), "mean error above"},
		{"disordered median", OrderScored(41), edit("first", map[string]any{"p": 0.5, "n": 3, "q": []float64{9, 1, 5, 0, 0}}), "P² median"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ExpertMixStateFile), []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		before, _ := c.mix.Weights()
		found, err := c.mix.Restore(dir)
		if found || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: found %v, err %v; want an error saying %q", c.name, found, err, c.want)
		}
		if after, _ := c.mix.Weights(); after != before || c.mix.first.N != 0 {
			t.Errorf("%s: the failed restore changed the mixture", c.name)
		}
	}
}

// Whatever the state file holds, Restore refuses it or gives a mixture
// whose weights and predictions are finite: a damaged file never crashes
// serve nor poisons its forecasts.
func FuzzExpertMixRestore(f *testing.F) {
	x := OrderScored(41)
	feedMix(x, 0, 60)
	dir := f.TempDir()
	if err := x.Save(dir); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, ExpertMixStateFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"kind":"pitstop.expert_mix","version":1,"experts":["model","blend","history"],"by_order":true,"first_tokens":41,"order_window":32,"loss":[[1e308,1e308,0],[0,0,0]],"n":[[1,1,1],[0,0,0]]}`))
	f.Add([]byte(`{}`))
	probs := make([]float32, NumClasses)
	probs[BinOf(90)] = 1
	later := ProgramBlend{}.Observe(120, 150, "t")
	f.Fuzz(func(t *testing.T, data []byte) {
		y := OrderScored(41)
		if y.restore(data) != nil {
			return
		}
		first, lw := y.Weights()
		for _, w := range append(first[:], lw[:]...) {
			if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				t.Fatalf("weights %v %v from %q", first, lw, data)
			}
		}
		for _, b := range []ProgramBlend{{}, later} {
			n, dist, _ := y.Predict(b, 90, probs, 1000)
			if n < 0 || n > 1000 {
				t.Fatalf("prediction %d from %q", n, data)
			}
			for _, p := range dist {
				if math.IsNaN(float64(p)) {
					t.Fatalf("a NaN in the distribution from %q", data)
				}
			}
			y.Observe(b, 90, 90, 100)
		}
	})
}

// serve's learner saves the mixture while the engine observes and predicts
// with it (run with -race).
func TestExpertMixSaveWhileObserving(t *testing.T) {
	x := OrderScored(41)
	dir := t.TempDir()
	done := make(chan struct{})
	go func() {
		defer close(done)
		feedMix(x, 0, 300)
	}()
	for range 10 {
		if err := x.Save(dir); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if found, err := OrderScored(41).Restore(dir); !found || err != nil {
		t.Fatalf("restore after concurrent saves: found %v, %v", found, err)
	}
}
