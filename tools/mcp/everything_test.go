package mcp

import (
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/tools"
	"github.com/pitstop-llm/pitstop/tools/mcp/mcptest"
)

// The reference server over stdio: its tools register under the naming
// rule with their schemas, and its content kinds (text, image, embedded
// resource) render for the model.
func TestEverythingServerStdio(t *testing.T) {
	bin := mcptest.Bin(t, mcptest.Everything)
	reg := tools.NewRegistry()
	src := startSource(t, reg, ServerSpec{Name: "everything", Command: []string{bin, "stdio"}}, quick(nil))
	for _, name := range []string{"everything__add", "everything__echo", "everything__longRunningOperation", "everything__getTinyImage"} {
		if _, ok := reg.Get(name); !ok {
			t.Errorf("%s not registered (registered: %v)", name, reg.Names())
		}
	}
	if st := src.Status(); st.Transport != "stdio" || st.PID == 0 {
		t.Errorf("status %+v", st)
	}
	ex := newExecutor(t, reg)
	if r := run(ex, "everything__add", `{"a":2,"b":3}`); r.IsError || r.Content != "The sum of 2 and 3 is 5." {
		t.Errorf("add: %+v", r)
	}
	if r := run(ex, "everything__getTinyImage", `{}`); r.IsError || !strings.Contains(r.Content, "This is a tiny image:\n[image: image/png, ") {
		t.Errorf("image: %+v", r)
	}
	if r := run(ex, "everything__getResourceReference", `{"resourceId":2}`); r.IsError || !strings.Contains(r.Content, "[resource <test://static/resource/2>") {
		t.Errorf("resource: %+v", r)
	}
	began := time.Now()
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("closed in %v", time.Since(began))
}
