package runtime

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// MaxCacheSaltBytes bounds a client's cache_salt (ChatRequest.CacheSalt).
const MaxCacheSaltBytes = 256

// cacheSalter turns a call's tenant and its client's cache_salt into the
// engine's prefix-cache namespace (engine.Request.CacheSalt): calls of one
// tenant and salt share cached prefixes, calls of two never do, so a
// tenant's cached_tokens and time to first token say nothing of what
// another tenant sent.
//
// The salt is the first 64 bits of HMAC-SHA256 under a key drawn at start.
// Per process, not saved (unlike the tenants' naming key): the KV cache dies
// with the process, so no salt needs to outlive it. Keyed, not a plain hash
// of the name: the engine's block hashes are FNV, not a cryptographic hash,
// and a tenant who could compute another's salt could search for prompts
// whose blocks collide with that tenant's chain.
type cacheSalter struct{ key [32]byte }

func newCacheSalter() *cacheSalter {
	c := &cacheSalter{}
	rand.Read(c.key[:]) // never fails (crypto/rand)
	return c
}

// salt is the namespace of tenant's calls with client's cache_salt. Calls
// with neither are in namespace 0, as before tenants were salted. The
// client's salt narrows the tenant's namespace and never replaces it: two
// tenants sending one cache_salt still share nothing.
func (c *cacheSalter) salt(tenant, client string) uint64 {
	if tenant == "" && client == "" {
		return 0
	}
	s := binary.LittleEndian.Uint64(c.mac(tenant, client))
	if s == 0 {
		s = 1 // 0 is the namespace of calls without a tenant
	}
	return s
}

// wire is the cache_salt a remote backend gets for the call (empty for
// calls with neither a tenant nor a salt): 128 bits of the same MAC in hex,
// so the backend, which sees every tenant of the router as one client,
// keeps their prefixes apart and learns neither the tenant nor the
// client's salt. A router's restart draws a new key: its calls then miss
// what the backends cached before.
func (c *cacheSalter) wire(tenant, client string) string {
	if tenant == "" && client == "" {
		return ""
	}
	return "pitstop-" + hex.EncodeToString(c.mac(tenant, client)[:16])
}

// mac is HMAC-SHA256 of the tenant (its length first: ("ab", "c") is not
// ("a", "bc")) and the client's salt.
func (c *cacheSalter) mac(tenant, client string) []byte {
	m := hmac.New(sha256.New, c.key[:])
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(tenant)))
	m.Write(n[:])
	m.Write([]byte(tenant))
	m.Write([]byte(client))
	return m.Sum(nil)
}
