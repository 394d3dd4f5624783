package predictor

import (
	"encoding/json"
	"math"
	"net/url"
	"path"
	"strings"
	"sync"
)

// ArgumentClass names what in a tool call's JSON arguments decides its
// duration, where something does: the program of a shell command (from a
// "command", "cmd" or "script" string: ShellProgram) or the host of a URL
// (a "url" or "uri" string). It returns "" when the arguments hold neither,
// or are not a JSON object.
func ArgumentClass(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "cmd", "script"} {
		if s, ok := m[k].(string); ok {
			if p := ShellProgram(s); p != "" {
				return "prog:" + p
			}
		}
	}
	for _, k := range []string{"url", "uri"} {
		if s, ok := m[k].(string); ok {
			if u, err := url.Parse(s); err == nil && u.Host != "" {
				return "host:" + strings.ToLower(u.Hostname())
			}
		}
	}
	return ""
}

// setupPrograms only prepare the shell for the command that follows them
// (cd /repo && pytest): they do not decide its duration.
var setupPrograms = map[string]bool{"cd": true, "pushd": true, "popd": true, "export": true, "source": true, ".": true, "set": true}

// ShellProgram is the program that decides a shell command line's
// duration: the basename of the first word of its first simple command
// (split at &&, ||, ;, | and newlines) that is not a setup command (cd,
// export, source, ...), environment assignments (FOO=1 make) skipped; for
// "python -m mod" it is "python -m mod". Only setup commands: the first of
// them. "" for a blank line.
func ShellProgram(line string) string {
	first := ""
	for _, simple := range strings.FieldsFunc(line, func(r rune) bool { return r == '&' || r == '|' || r == ';' || r == '\n' }) {
		f := strings.Fields(simple)
		for len(f) > 0 && strings.Contains(f[0], "=") {
			f = f[1:] // FOO=1 make test
		}
		if len(f) == 0 {
			continue
		}
		prog := path.Base(f[0])
		if first == "" {
			first = prog
		}
		if setupPrograms[prog] {
			continue
		}
		if strings.HasPrefix(prog, "python") && len(f) > 2 && f[1] == "-m" {
			return prog + " -m " + f[2]
		}
		return prog
	}
	return first
}

// classWindow is how many of a tool's calls the class-level and the
// per-tool predictions are scored on.
const classWindow = 50

// classMinSamples is how many calls an argument class needs before its own
// median is a candidate.
const classMinSamples = 3

// ClassDurations predicts a tool call's duration from its tool and, where
// the arguments decide (ArgumentClass), from the calls of the same class.
// The per-tool running median is the floor: for each tool both predictions
// are scored on every call before it is learnt (|ln(predicted/actual)| over
// the last classWindow calls), and the class's median is used only while it
// scores better. It is safe for concurrent use.
type ClassDurations struct {
	d *DurationEstimator // keys: tool, and tool + "\x00" + class

	mu     sync.Mutex
	scores map[string]*classScore // by tool
}

type classScore struct {
	tool, class [classWindow]float64
	next, n     int
}

func (s *classScore) better() bool {
	if s.n < classWindow/5 {
		return false
	}
	var t, c float64
	for i := range s.n {
		t += s.tool[i]
		c += s.class[i]
	}
	return c < t
}

// NewClassDurations returns an empty estimator.
func NewClassDurations(o DurationOptions) *ClassDurations {
	return NewClassDurationsOver(NewDurationEstimator(o))
}

// NewClassDurationsOver keeps its statistics in d, next to d's per-tool
// ones (a class's key is its tool's, a NUL and the class), so that they are
// saved and loaded with d. d's per-tool statistics may be learnt elsewhere:
// ObserveClass learns only the class.
func NewClassDurationsOver(d *DurationEstimator) *ClassDurations {
	return &ClassDurations{d: d, scores: map[string]*classScore{}}
}

func classKey(tool, class string) string { return tool + "\x00" + class }

// toolMedian is the per-tool running median once the tool has
// classMinSamples calls, PredictDuration (which weighs in the tool's prior)
// before.
func (c *ClassDurations) toolMedian(tool string) float64 {
	if s, ok := c.d.Stats(tool); ok && s.Count >= classMinSamples {
		if v, ok := c.d.Quantile(tool, 0.5); ok {
			return v
		}
	}
	return c.d.PredictDuration(tool)
}

// classMedian is the class's running median once it has classMinSamples.
func (c *ClassDurations) classMedian(tool, class string) (float64, bool) {
	if class == "" {
		return 0, false
	}
	k := classKey(tool, class)
	if s, ok := c.d.Stats(k); !ok || s.Count < classMinSamples {
		return 0, false
	}
	return c.d.Quantile(k, 0.5)
}

// Predict is the expected duration in seconds of a call of tool with args.
func (c *ClassDurations) Predict(tool, args string) float64 {
	if k, ok := c.classFor(tool, args); ok {
		if v, ok := c.d.Quantile(k, 0.5); ok {
			return v
		}
	}
	return c.toolMedian(tool)
}

// Quantile is the q-quantile (0.5 or 0.9, as DurationEstimator.Quantile)
// of the duration of a call of tool with args, from the statistics Predict
// reads: the argument class's while it predicts the tool's calls better,
// else the tool's. ok is false when they have no samples.
func (c *ClassDurations) Quantile(tool, args string, q float64) (float64, bool) {
	if k, ok := c.classFor(tool, args); ok {
		return c.d.Quantile(k, q)
	}
	return c.d.Quantile(tool, q)
}

// classFor is the statistics key of args' class when tool's calls are
// predicted by their class (it has enough samples and beats the per-tool
// median on the tool's recent calls).
func (c *ClassDurations) classFor(tool, args string) (string, bool) {
	class := ArgumentClass(args)
	if _, ok := c.classMedian(tool, class); !ok {
		return "", false
	}
	c.mu.Lock()
	s := c.scores[tool]
	use := s != nil && s.better()
	c.mu.Unlock()
	return classKey(tool, class), use
}

// Observe scores both predictions on a finished call, then learns it.
func (c *ClassDurations) Observe(tool, args string, seconds float64) {
	if !validSeconds(seconds) {
		return
	}
	c.ObserveClass(tool, args, seconds)
	c.d.Observe(tool, seconds)
}

// ObserveClass is Observe for an estimator whose per-tool statistics are
// learnt elsewhere (NewClassDurationsOver): it scores both predictions and
// learns the call's class, not its tool. When the tool's statistics already
// hold this call, the per-tool median is scored with the call in it: the
// class must then beat a floor that has seen the answer, which only makes
// the class's adoption more cautious.
func (c *ClassDurations) ObserveClass(tool, args string, seconds float64) {
	if !validSeconds(seconds) {
		return
	}
	class := ArgumentClass(args)
	if cv, ok := c.classMedian(tool, class); ok {
		tv := c.toolMedian(tool)
		c.mu.Lock()
		s := c.scores[tool]
		if s == nil {
			s = &classScore{}
			c.scores[tool] = s
		}
		s.tool[s.next], s.class[s.next] = logRatio(tv, seconds), logRatio(cv, seconds)
		s.next = (s.next + 1) % classWindow
		s.n = min(s.n+1, classWindow)
		c.mu.Unlock()
	}
	if class != "" {
		c.d.Observe(classKey(tool, class), seconds)
	}
}

// logRatio is |ln(predicted/actual)|, with durations floored at 1 ms so that
// instant calls do not dominate.
func logRatio(predicted, actual float64) float64 {
	return math.Abs(math.Log(max(predicted, 1e-3) / max(actual, 1e-3)))
}
