package predictor

import (
	"fmt"
	"os"
	"path/filepath"
)

// BFCLCategories are the single-turn BFCL categories shipped in
// predictor/data/bfcl (Apache-2.0, from ShishirPatil/gorilla's Berkeley
// Function Calling Leaderboard v4: questions, and ground truth under
// possible_answer/).
var BFCLCategories = []string{
	"simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
	"parallel_multiple", "live_simple", "live_parallel", "live_parallel_multiple",
}

// ConvertBFCLDir converts the BFCL categories found in dir (laid out as BFCL
// ships them: BFCL_v4_<category>.json and possible_answer/BFCL_v4_<category>.json);
// categories nil means BFCLCategories. See ConvertBFCL.
func ConvertBFCLDir(dir string, categories []string, count TokenCounter) ([]TraceRecord, error) {
	if categories == nil {
		categories = BFCLCategories
	}
	count, err := counterOr(count) // loaded once for every category
	if err != nil {
		return nil, err
	}
	var out []TraceRecord
	for _, cat := range categories {
		q, err := os.ReadFile(filepath.Join(dir, "BFCL_v4_"+cat+".json"))
		if err != nil {
			return nil, fmt.Errorf("bfcl %s: %w", cat, err)
		}
		a, err := os.ReadFile(filepath.Join(dir, "possible_answer", "BFCL_v4_"+cat+".json"))
		if err != nil {
			return nil, fmt.Errorf("bfcl %s: %w", cat, err)
		}
		recs, err := ConvertBFCL(q, a, cat, count)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}
