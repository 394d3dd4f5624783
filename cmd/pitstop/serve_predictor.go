package main

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime"
)

// predictorLearnFlags are serve's flags for online learning of the length
// model.
type predictorLearnFlags struct {
	on       bool
	stateDir string
	tenants  int
}

func addPredictorLearnFlags(fl *pflag.FlagSet, f *predictorLearnFlags) {
	fl.BoolVar(&f.on, "predictor-learn", true, "learn the length model online from the segments served (a copy of the ONNX model, adopted only while it beats the shipped one on recent segments)")
	fl.StringVar(&f.stateDir, "predictor-state-dir", "", "directory that keeps the online-learnt length model ("+predictor.OnlineStateFile+") and the length experts' mixture ("+predictor.ExpertMixStateFile+") with its window modes ("+predictor.ModeLedStateFile+"; both also without --predictor-learn; each tenant's own under "+runtime.TenantStatesDir+"/) across restarts; empty: learn in memory only")
	fl.IntVar(&f.tenants, "predictor-tenant-states", runtime.DefaultTenantStates, "how many tenants' own length states (experts' mixture and window modes, each tenant's learnt from its own calls only) are held in memory; beyond it the least recently used is saved under --predictor-state-dir (dropped without one) and restored when its tenant calls again")
}

// check says what is wrong with the flags (nil when nothing).
func (f predictorLearnFlags) check() error {
	if f.tenants < 1 {
		return usagef("invalid --predictor-tenant-states %d: must be >= 1", f.tenants)
	}
	return nil
}

// apply turns online learning on for length when asked. A length predictor
// that cannot learn (the history fallback, a model that is not a plain MLP)
// and a state file that cannot be read leave learning off with the reason in
// the log: serving goes on, and a bad state file is never overwritten.
// Without learning, the state directory still keeps the length experts'
// mixture (saved at exit).
func (f predictorLearnFlags) apply(length *runtime.Length, log *slog.Logger) {
	length.MaxTenantStates = f.tenants
	if !f.on {
		if f.stateDir == "" {
			return
		}
		if err := length.KeepMixture(f.stateDir, log); err != nil {
			log.Warn("length predictor: the state directory keeps nothing", "reason", err)
		}
		return
	}
	if err := length.LearnOnline(f.stateDir, predictor.OnlineOptions{}, log); err != nil {
		log.Warn("length predictor: not learning online", "reason", err)
		return
	}
	log.Info("length predictor: learning online", "state_dir", f.stateDir)
}
