package runtime

import "testing"

// A call's prefix-cache namespace is one per tenant and client salt: the
// same for the same pair, another for another tenant or salt (the tenant's
// name and the salt never run into each other), 0 and "" for calls with
// neither, and another after a restart (a new key).
func TestCacheSalter(t *testing.T) {
	c, restarted := newCacheSalter(), newCacheSalter()
	if c.salt("", "") != 0 || c.wire("", "") != "" {
		t.Fatalf("calls without tenant or salt: salt %x, wire %q; want 0 and none", c.salt("", ""), c.wire("", ""))
	}
	pairs := [][2]string{{"alpha", ""}, {"beta", ""}, {"alpha", "x"}, {"beta", "x"}, {"", "x"}, {"ab", "c"}, {"a", "bc"}, {"", "alpha"}}
	salts, wires := map[uint64][2]string{}, map[string][2]string{}
	for _, p := range pairs {
		s, w := c.salt(p[0], p[1]), c.wire(p[0], p[1])
		if s == 0 || w == "" {
			t.Fatalf("%q: salt %x, wire %q", p, s, w)
		}
		if s != c.salt(p[0], p[1]) || w != c.wire(p[0], p[1]) {
			t.Fatalf("%q: salt or wire changes between calls", p)
		}
		if q, dup := salts[s]; dup {
			t.Fatalf("%q and %q share salt %x", p, q, s)
		}
		if q, dup := wires[w]; dup {
			t.Fatalf("%q and %q share wire salt %q", p, q, w)
		}
		salts[s], wires[w] = p, p
		if restarted.salt(p[0], p[1]) == s || restarted.wire(p[0], p[1]) == w {
			t.Fatalf("%q: the same salt under another process's key", p)
		}
	}
}

// BenchmarkCacheSalt is the runtime's cost per call of its prefix-cache
// namespace: a tenant's name and a client's cache_salt.
func BenchmarkCacheSalt(b *testing.B) {
	c := newCacheSalter()
	for range b.N {
		c.salt("tenant-of-some-length", "a-client-salt")
	}
}
