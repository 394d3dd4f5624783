package runtime

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
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
	m := hmac.New(sha256.New, c.key[:])
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(tenant)))
	m.Write(n[:]) // the tenant's length first: ("ab", "c") is not ("a", "bc")
	m.Write([]byte(tenant))
	m.Write([]byte(client))
	s := binary.LittleEndian.Uint64(m.Sum(nil))
	if s == 0 {
		s = 1 // 0 is the namespace of calls without a tenant
	}
	return s
}
