package report

// PredictorStats is a run's predictor section (bench --predictor serve,
// onnx, history): what the predictions policies saw were made of.
type PredictorStats struct {
	// Segments is how many segments' lengths were predicted through the
	// point step after the length model (predictor.ServedStep).
	Segments int `json:"segments"`
	// ModeChosen is how many of them were predicted by the window mode of
	// their class rather than the mixture's point (predictor.ModeLed
	// chose it: it ordered the finished segments better).
	ModeChosen int `json:"mode_chosen"`
}
