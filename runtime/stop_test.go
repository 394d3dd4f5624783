package runtime

import (
	"strings"
	"testing"
)

// TestStopMatcher: a stop string is found however the content is cut into
// pieces, nothing of it is emitted, and held text comes out at the flush.
func TestStopMatcher(t *testing.T) {
	cases := []struct {
		stops  []string
		pieces []string
		want   string
		stop   bool
	}{
		{[]string{"END"}, []string{"abc", "E", "N", "D", "x"}, "abc", true},
		{[]string{"END"}, []string{"abcEN", "Dx"}, "abc", true},
		{[]string{"END"}, []string{"abEN", "x"}, "abENx", false},
		{[]string{"\n\n", "STOP"}, []string{"one\n", "two ST", "OP"}, "one\ntwo ", true},
		{[]string{"ab", "b"}, []string{"xa", "b"}, "x", true},
		{nil, []string{"a", "b"}, "ab", false},
		{[]string{"<<"}, []string{"a<", "b<", "<c"}, "a<b", true},
	}
	for i, c := range cases {
		m := stopMatcher{stops: c.stops}
		var out strings.Builder
		stopped := false
		for _, p := range c.pieces {
			e, s := m.feed(p)
			out.WriteString(e)
			for _, st := range c.stops {
				if strings.Contains(out.String(), st) {
					t.Fatalf("case %d: stop %q emitted in %q", i, st, out.String())
				}
			}
			if s {
				stopped = true
				break
			}
		}
		if !stopped {
			out.WriteString(m.flush())
		}
		if out.String() != c.want || stopped != c.stop {
			t.Errorf("case %d: got %q stop=%v, want %q stop=%v", i, out.String(), stopped, c.want, c.stop)
		}
	}
}
