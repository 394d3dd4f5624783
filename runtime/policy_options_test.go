package runtime

import (
	"testing"
	"time"
)

// TestPolicyOptionsDropIdleTenantsWithTheirPrograms: the serving policy
// forgets an idle tenant's program statistics after the program TTL, and
// the options are valid for every policy serve can run.
func TestPolicyOptionsDropIdleTenantsWithTheirPrograms(t *testing.T) {
	o := policyOptions(Config{ProgramTTL: 90 * time.Second})
	if o.PitstopClassIdle != 90 {
		t.Fatalf("class idle %g s, want the program TTL's 90 s", o.PitstopClassIdle)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("serve's policy options do not validate: %v", err)
	}
}
