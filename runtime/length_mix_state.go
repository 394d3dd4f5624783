package runtime

import (
	"fmt"
	"log/slog"

	"github.com/pitstop-llm/pitstop/predictor"
)

// The expert mixture's state across restarts (predictor.ExpertMixStateFile
// under the predictor's state directory), and beside it the window modes
// and choice by order that follow it (predictor.ModeLedStateFile); each
// tenant's own under TenantStatesDir (tenantSteps). With online learning
// the learner saves them beside the learnt model (LearnOnline); without,
// KeepMixture restores the deployment's at start (tenants' as they call)
// and Close saves them.

// KeepMixture keeps l's expert mixture across restarts under stateDir when
// l does not learn online (LearnOnline keeps it when it does): the state
// saved there is restored now and saved again at Close. A file that cannot
// be read is a warning and a fresh mixture, replaced at Close. It is an
// error when l predicts without an ONNX model (there is no mixture then).
func (l *Length) KeepMixture(stateDir string, log *slog.Logger) error {
	if l.model == nil {
		return fmt.Errorf("the length experts' mixture needs the ONNX length model; %s predicts", l.Describe())
	}
	if stateDir == "" {
		return nil
	}
	if log == nil {
		log = slog.Default()
	}
	restoreMixture(l.expertMix(), l.modeLed(), stateDir, log)
	l.mixDir, l.mixLog = stateDir, log
	l.keepTenants(stateDir, log)
	return nil
}

// keepTenants keeps the tenants' own states under stateDir (tenantSteps);
// a naming key that cannot be read keeps them in memory only, with the
// reason in the log.
func (l *Length) keepTenants(stateDir string, log *slog.Logger) {
	ts := l.tenantSteps()
	ts.log = log
	if err := ts.persist(stateDir); err != nil {
		log.Warn("length predictor: tenants' states kept in memory only", "reason", err)
	}
}

// restoreMixture loads the states of mix and of led from stateDir, saying
// in the log what it restored, or why each starts afresh.
func restoreMixture(mix *predictor.ExpertMix, led *predictor.ModeLed, stateDir string, log *slog.Logger) {
	switch found, err := led.Restore(stateDir); {
	case err != nil:
		log.Warn("length predictor: starting the window modes afresh; their state file will be replaced at the next save", "err", err)
	case found:
		log.Info("length predictor: restored the window modes", "dir", stateDir, "mode_chosen", led.ModeChosen())
	}
	found, err := mix.Restore(stateDir)
	switch {
	case err != nil:
		log.Warn("length predictor: starting the expert mixture afresh; its state file will be replaced at the next save", "err", err)
	case found:
		first, later := mix.Weights()
		log.Info("length predictor: restored the expert mixture", "dir", stateDir, "first_weights", first, "later_weights", later)
	}
}

// saveMixture saves the mixture KeepMixture keeps, if any (Close).
func (l *Length) saveMixture() {
	if l.mixDir == "" || l.mix == nil {
		return
	}
	saveMixture(l.mix, l.led, l.mixDir, l.mixLog)
}

// saveMixture saves mix and led under stateDir, logging a failure.
func saveMixture(mix *predictor.ExpertMix, led *predictor.ModeLed, stateDir string, log *slog.Logger) {
	if err := mix.Save(stateDir); err != nil {
		log.Warn("length predictor: saving the expert mixture", "err", err)
	}
	if err := led.Save(stateDir); err != nil {
		log.Warn("length predictor: saving the window modes", "err", err)
	}
}
