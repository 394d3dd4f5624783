package predictor

import (
	"os"
	"path/filepath"
	"testing"
)

// shifted is toyRecords with every output lengthened by extra tokens: a
// deployment whose agents write more than the shipped model's training data.
func shifted(n int, seed uint64, extra int) []TraceRecord {
	recs := toyRecords(n, seed)
	for i := range recs {
		if recs[i].PreToolOutputTokens < 500 {
			recs[i].PreToolOutputTokens += extra
		}
	}
	return recs
}

func maeOf(p LengthPredictor, recs []TraceRecord) float64 {
	pred, _ := PredictAll(p, recs)
	rep, _ := Evaluate(pred, recs)
	return rep.MAETokens
}

func TestOnlineLengthLearnsAShiftAndAdopts(t *testing.T) {
	mlp, over, _ := toyModel(t)
	base := GoClassifier{MLP: mlp, OverflowTokens: over}
	o, err := NewOnlineLength(base, mlp, over, OnlineOptions{Window: 100, MinSegments: 50, PublishEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	test := shifted(200, 9, 60)
	before := maeOf(base, test)
	for i, r := range shifted(400, 5, 60) {
		if i == 40 && (o.Stats().Choice == ChoiceLearnt) {
			t.Fatal("adopted before MinSegments segments were scored")
		}
		o.Learn(r)
	}
	st := o.Stats()
	if st.Seen != 400 || st.Window != 100 || st.Choice != ChoiceLearnt || !(st.LearntMAE < st.ShippedMAE) {
		t.Fatalf("after 400 shifted segments: %+v, want the learnt model adopted with the lower window MAE", st)
	}
	after := maeOf(o, test)
	if !(after < 0.5*before) {
		t.Fatalf("MAE on unseen shifted records %.1f after learning, %.1f before: want under half", after, before)
	}
	// The shipped weights are untouched.
	if maeOf(base, test) != before {
		t.Fatal("learning changed the shipped model")
	}
}

// A learner that does no better than the shipped model is not adopted.
func TestOnlineLengthKeepsTheShippedModelWhenNotBetter(t *testing.T) {
	mlp, over, _ := toyModel(t)
	base := GoClassifier{MLP: mlp, OverflowTokens: over}
	o, err := NewOnlineLength(base, mlp, over, OnlineOptions{Window: 100, MinSegments: 50, PublishEvery: 10, LR: 5})
	if err != nil {
		t.Fatal(err)
	}
	// A learning rate of 5 wrecks the copy on data the shipped model knows.
	// Without history, the program's-mean predictor is the shipped model.
	for _, r := range toyRecords(200, 11) {
		r.Input.History = History{}
		o.Learn(r)
	}
	st := o.Stats()
	if st.Choice != ChoiceShipped || !(st.LearntMAE >= st.ShippedMAE) || st.HistoryMAE != st.ShippedMAE {
		t.Fatalf("%+v: want the shipped model kept", st)
	}
	test := toyRecords(100, 12)
	if maeOf(o, test) != maeOf(base, test) {
		t.Fatal("predictions are not the shipped model's while the learner is not adopted")
	}
}

func TestOnlineLengthSaveRestore(t *testing.T) {
	mlp, over, _ := toyModel(t)
	base := GoClassifier{MLP: mlp, OverflowTokens: over}
	opt := OnlineOptions{Window: 100, MinSegments: 50, PublishEvery: 10}
	o, _ := NewOnlineLength(base, mlp, over, opt)
	for _, r := range shifted(300, 5, 60) {
		o.Learn(r)
	}
	dir := t.TempDir()
	if err := o.Save(dir); err != nil {
		t.Fatal(err)
	}
	// The saved file is an ONNX length model in its own right.
	if _, err := ParseONNX(mustRead(t, filepath.Join(dir, OnlineStateFile))); err != nil {
		t.Fatalf("saved state is not a length model: %v", err)
	}
	r, _ := NewOnlineLength(base, mlp, over, opt)
	found, err := r.Restore(dir)
	if err != nil || !found {
		t.Fatalf("restore: found %v, %v", found, err)
	}
	if got, want := r.Stats(), o.Stats(); got != want {
		t.Fatalf("restored %+v, saved %+v", got, want)
	}
	test := shifted(100, 9, 60)
	if maeOf(r, test) != maeOf(o, test) {
		t.Fatal("restored learner predicts differently")
	}
	// No state yet: not an error. A bad file: an error, and nothing changes.
	fresh, _ := NewOnlineLength(base, mlp, over, opt)
	if found, err := fresh.Restore(t.TempDir()); found || err != nil {
		t.Fatalf("empty dir: found %v, %v", found, err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, OnlineStateFile), []byte("not onnx"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Restore(bad); err == nil {
		t.Fatal("a corrupt state file restored without error")
	}
	if fresh.Stats().Seen != 0 {
		t.Fatal("a failed restore changed the learner")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// defaultOnline is a learner on top of the shipped model (run in Go here),
// already adopted, as a deployment has it after learning.
func defaultOnline(b *testing.B, opt OnlineOptions) (*OnlineLength, []TraceRecord) {
	info, err := ParseONNX(DefaultModelBytes())
	if err != nil {
		b.Fatal(err)
	}
	base := GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}
	o, err := NewOnlineLength(base, info.MLP, info.OverflowTokens, opt)
	if err != nil {
		b.Fatal(err)
	}
	recs := shifted(256, 5, 60)
	DeriveContext(recs)
	return o, recs
}

func BenchmarkOnlineLengthPredict(b *testing.B) {
	o, recs := defaultOnline(b, OnlineOptions{MinSegments: 1, PublishEvery: 1})
	for _, r := range recs {
		o.Learn(r)
	}
	if !(o.Stats().Choice == ChoiceLearnt) {
		b.Fatal("learner not adopted: the benchmark would time the shipped model")
	}
	in := sampleInput()
	b.ReportAllocs()
	for b.Loop() {
		o.PredictLength(in)
	}
}

// BenchmarkOnlineLengthPredictHistory times a prediction while history
// predicts (the program's mean, with its Laplace distribution since session
// 12), on top of the shipped model's forward pass.
func BenchmarkOnlineLengthPredictHistory(b *testing.B) {
	o, recs := defaultOnline(b, OnlineOptions{MinSegments: 1, PublishEvery: 1, LR: 1e-9})
	for _, r := range recs {
		a := r.PreToolOutputTokens
		r.Input.History = History{}.Observe(a, "tts").Observe(a, "tts")
		o.Learn(r)
	}
	if !(o.Stats().Choice == ChoiceHistory) {
		b.Fatal("history not chosen: the benchmark would time another predictor")
	}
	in := sampleInput()
	b.ReportAllocs()
	for b.Loop() {
		o.PredictLength(in)
	}
}

func BenchmarkOnlineLengthLearn(b *testing.B) {
	o, recs := defaultOnline(b, OnlineOptions{})
	i := 0
	for b.Loop() {
		o.Learn(recs[i%len(recs)])
		i++
	}
}

// The adoption bound: a steady gain clears it in a few segments, a gain
// that is noise (as often worse as better) never does.
func TestErrWindowBeatsBaseWithConfidence(t *testing.T) {
	steady := newErrWindow(200)
	for range 5 {
		steady.add(30, 20, 30) // learnt 10 tokens better each time, ±1
		steady.add(30, 21, 30)
	}
	if !steady.beatsBase(steady.Learnt, adoptZ) {
		t.Fatal("a steady 10-token gain over 10 segments did not clear the bound")
	}
	if steady.beatsBase(steady.History, adoptZ) {
		t.Fatal("a predictor equal to the shipped model cleared the bound")
	}
	noisy := newErrWindow(200)
	for i := range 200 {
		d := 40.0
		if i%2 == 0 {
			d = -38 // mean gain 1 token, spread 39
		}
		noisy.add(50, 50+d, 50)
	}
	if noisy.beatsBase(noisy.Learnt, adoptZ) {
		t.Fatal("a 1-token mean gain with a 39-token spread cleared the bound")
	}
	one := newErrWindow(200)
	one.add(50, 0, 50)
	if one.beatsBase(one.Learnt, adoptZ) {
		t.Fatal("one segment cleared the bound")
	}
}

// When history predicts, the distribution PredictLength returns is
// history's too, so a mixture that weighs an expert by its point mixes the
// distribution that earned the weight. It once returned the shipped
// model's distribution with history's point, and the order-scored mixture
// served the shipped model's median with history's weight.
func TestOnlineLengthHistoryChoiceReturnsHistorysDistribution(t *testing.T) {
	mlp, over, _ := toyModel(t)
	base := GoClassifier{MLP: mlp, OverflowTokens: over}
	// Programs that write 150 tokens more than the toy model learnt, every
	// segment the length of the program's earlier ones: history is exact.
	recs := shifted(400, 21, 150)
	for i := range recs {
		a := recs[i].PreToolOutputTokens
		recs[i].Input.History = History{}.Observe(a, "tts").Observe(a, "tts")
	}
	o, err := NewOnlineLength(base, mlp, over, OnlineOptions{Window: 100, MinSegments: 20, PublishEvery: 10, LR: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[:200] {
		o.Learn(r)
	}
	if c := o.Stats().Choice; c != ChoiceHistory {
		t.Fatalf("choice %v after 200 segments that history predicts exactly, want history", c)
	}
	var online, mixed float64
	mix := NewProgramBlends(OrderScored(-1))
	for _, r := range recs[200:] {
		n, probs := o.PredictLength(r.Input)
		if med := LengthQuantile(probs, 0.5, over); abs(med-n) > BinWidth/2 {
			t.Fatalf("history's point %d, but its distribution's median is %d", n, med)
		}
		online += float64(abs(n - r.PreToolOutputTokens))
		mixed += float64(abs(mix.Predict(r, n, probs, over) - r.PreToolOutputTokens))
		mix.Observe(r, n, probs, over)
	}
	if mixed > online+BinWidth*200 {
		t.Fatalf("the mixture of the history choice's predictions has %.0f tokens of summed error, the choice alone %.0f", mixed, online)
	}
}
