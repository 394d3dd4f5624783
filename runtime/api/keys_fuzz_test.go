package api

import (
	"strings"
	"testing"
)

// FuzzParseKeysFile: any file either parses into keys that each have a
// secret and a valid tenant name, or fails with an error naming a line;
// an error never quotes a long first field (a key) whole.
func FuzzParseKeysFile(f *testing.F) {
	for _, seed := range []string{
		"", "# c\n", "k1\n", "k1 tenant=a admin\nk2 tenant=a max-tools=3 max-concurrent=2 tokens-per-s=1.5\n",
		"k tenant=\n", "k tenant=a/b\n", "k max-tools=x\n", "k admin=1\n", "a b c\n",
		"averyveryverylongsecretkey-0123456789 tokens-per-s=-1\n", "k1 tenant=a max-tools=1\nk2 tenant=a max-tools=2\n",
		"\x00\xff tenant=\xff\n", "k tokens-per-s=1e400\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		keys, over, err := ParseKeysFile([]byte(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("error without a line: %v", err)
			}
			for _, line := range strings.Split(data, "\n") {
				if fs := strings.Fields(line); len(fs) > 0 && len(fs[0]) > 24 && strings.Contains(err.Error(), fs[0]) {
					t.Fatalf("error quotes a key: %v", err)
				}
			}
			return
		}
		for _, k := range keys {
			if k.Secret == "" || !tenantNameRE.MatchString(k.Tenant) {
				t.Fatalf("bad key %+v", k)
			}
		}
		for tenant := range over {
			if !tenantNameRE.MatchString(tenant) {
				t.Fatalf("bad tenant %q", tenant)
			}
		}
	})
}
