// Package predictor predicts, before a call segment runs, how many tokens the
// model will generate before its next tool call (the pre-tool output length)
// and how long that tool will take — the two inputs of LAMPS's handling and
// ranking (memory over time of preserve / discard / swap).
//
// Output length: an MLP classifier (Featurize → 64 ReLU units → 51 logits:
// 50 bins of 10 tokens and an overflow bin, as in LAMPS §4), trained in Go
// (Train, TrainLengthModel: Adam, softmax cross-entropy, deterministic seed),
// exported to ONNX (MarshalONNX, opset 13) and run with ONNX Runtime through
// github.com/yalue/onnxruntime_go (Model: LoadModel, LoadDefault,
// PredictLength, PredictBatch). A prediction is the median of the predicted
// distribution (LengthQuantile), the overflow bin standing for the median
// length of the training set's overflow records (metadata
// pitstop.overflow_tokens). The same MLP also runs in Go (GoClassifier), and
// HistoryPredictor is the fallback with no model. Features read nothing of the
// segment itself (FeatureVersion 2, TestFeaturesDoNotLeak).
//
// Per program: ProgramBlend mixes a prediction's distribution with one
// around the program's mean output so far (after the same last tool, where
// there is one; a retry, Input.Retry, with the program's earlier retries),
// weighted by how well each predicted the program's earlier segments. Across programs: ExpertMix mixes that with the history baseline,
// weighted by their errors on the deployment's finished segments, first
// segments and later ones apart; OrderScored weighs them by the pairs of
// finished segments they order wrongly, since policies rank by the
// prediction. serve and bench apply the blend and OrderScored to every
// prediction, and eval prints both mixtures (BlendByProgram). The model is
// unchanged. A mixture persists as JSON beside the learnt model (Save,
// Restore), so a restarted serve weighs its experts as before. serve then
// predicts through ModeLed: the window mode of the segment's class
// (WindowModes, with the argument class of the call the segment reads)
// where it has ordered the finished segments better than the mixture
// (OrderLed), else the mixture's point. These steps after the model are one
// type, ServedStep, through which serve, bench --predictor serve and eval
// --online (ServedPoints) all predict.
//
// Online learning: OnlineLength updates a copy of the shipped MLP by SGD on
// each finished segment and predicts with the shipped model unless the
// learnt copy or the program's mean beats it on recent segments with 95%
// confidence; it persists as an ONNX model (Save, Restore). ClassDurations
// learns tool durations per argument class with the per-tool median as its
// floor; serve predicts server-side tools with it.
//
// ONNX Runtime is a shared library that scripts/fetch_ort.sh puts in a cache
// (ORTLibraryPath); without it, loading a model fails with an error wrapping
// ErrORTMissing and callers fall back to GoClassifier or HistoryPredictor.
//
// Tool duration: DurationEstimator keeps, per tool, an exponentially
// weighted mean, P² p50/p90 sketches and a prior from the tool's metadata;
// it is safe for concurrent use and persists as JSON (Save, LoadDurations).
//
// Training data are trace records (TraceRecord, JSONL: AppendTrace,
// ReadTraces), one per finished segment, written by the runtime or converted
// from BFCL (ConvertBFCL), from OpenAI-style agent trajectories (ConvertChat:
// tau-bench, ToolBench), from SWE-agent and mini-swe-agent trajectories
// (ConvertSWEAgent: measured shell-command durations, and for mini-swe-agent
// the API's token counts) and from the InferCept/LAMPS set (by the package
// that reads that format, bench/workload/infercept: predictor depends on no
// workload). Converted text is counted with the tokenizer of the models the
// data came from (TiktokenCounter).
// Evaluate computes LAMPS's Acc-5 / Acc-15 / MAE and a confusion matrix;
// WindowModes is the point that maximises Acc-5 (the densest ±5-token window
// per class), measured beside the served median and not served: it orders
// segments worse (RankCorrelation);
// EvalDurations replays tool calls against a per-tool running median
// (within-2x rates).
// predictor/data/README.md says how the default model was made and how well
// it does.
package predictor
