package tools

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/dgraph-io/ristretto/v2"
)

// Defaults of the result cache.
const (
	DefaultCacheMaxBytes = 64 << 20
	DefaultCacheTTL      = 5 * time.Minute
)

// resultCache holds successful results of idempotent tools, keyed by the
// caller's scope (tenant), tool name, registration and canonical arguments;
// an entry costs the bytes of its result.
type resultCache struct {
	c *ristretto.Cache[string, string]
}

func newResultCache(maxBytes int64) (*resultCache, error) {
	counters := max(maxBytes/100, 1000) // ~10 counters per expected entry of ~1 KiB
	c, err := ristretto.NewCache(&ristretto.Config[string, string]{
		NumCounters:        counters,
		MaxCost:            maxBytes,
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("tools: result cache: %w", err)
	}
	return &resultCache{c: c}, nil
}

// cacheKey is the caller's scope, the tool name, its registration
// generation and the canonical form of the arguments (object keys sorted, no
// insignificant whitespace), so that {"a":1, "b":2} and {"b":2,"a":1} hit
// the same entry and a tool registered again under the same name does not
// see its predecessor's results. The scope keeps a tenant's results its own,
// of global tools too: a cached answer tells a caller that someone called
// the tool with these arguments within the TTL, which another tenant must
// not learn. The scope goes first with its length, so no scope's key is a
// prefix of another's.
func cacheKey(scope string, e *entry, args any) (string, bool) {
	canon, err := json.Marshal(args) // maps marshal with sorted keys
	if err != nil {
		return "", false
	}
	return strconv.Itoa(len(scope)) + ":" + scope + "\x00" + e.tool.Name + "\x00" + strconv.FormatUint(e.gen, 10) + "\x00" + string(canon), true
}

func (rc *resultCache) get(key string) (string, bool) {
	if rc == nil {
		return "", false
	}
	return rc.c.Get(key)
}

func (rc *resultCache) set(key, content string, ttl time.Duration) {
	if rc == nil {
		return
	}
	cost := int64(len(content))
	if cost == 0 {
		cost = 1
	}
	if rc.c.SetWithTTL(key, content, cost, ttl) {
		// Make the entry visible to the next call (ristretto applies sets
		// asynchronously); cheap next to running a tool.
		rc.c.Wait()
	}
}

func (rc *resultCache) close() {
	if rc != nil {
		rc.c.Close()
	}
}
