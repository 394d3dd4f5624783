package api

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/pitstop-llm/pitstop/runtime"
)

// EnvAPIKeys is the environment variable with comma-separated API keys.
const EnvAPIKeys = "PITSTOP_API_KEYS"

// AdminTenant is the tenant of an admin key that names none.
const AdminTenant = "admin"

// Key is one accepted API key and whom it stands for.
type Key struct {
	Secret string
	// Tenant owns what the key does (its programs, webhook tools, limits).
	Tenant string
	// Admin keys see every tenant's programs and tools and /metrics.
	Admin bool
}

// Keyring is the set of accepted keys and the tenants' limits. The zero
// value accepts no key (an open server).
type Keyring struct {
	keys []keyEntry
	// Overrides are the limits the keys file set per tenant; what a tenant
	// does not set is the server's default.
	Overrides map[string]TenantOverride
}

// TenantOverride is what a keys file sets of a tenant's limits (nil: the
// server's default).
type TenantOverride struct {
	MaxTools, MaxConcurrent *int
	TokensPerSecond         *float64
}

// Limits returns every tenant's limits: the defaults with the keys file's
// overrides.
func (k *Keyring) Limits(defaults runtime.TenantLimits) map[string]runtime.TenantLimits {
	out := map[string]runtime.TenantLimits{}
	if k == nil {
		return out
	}
	for tenant, o := range k.Overrides {
		l := defaults
		if o.MaxTools != nil {
			l.MaxTools = *o.MaxTools
		}
		if o.MaxConcurrent != nil {
			l.MaxConcurrent = *o.MaxConcurrent
		}
		if o.TokensPerSecond != nil {
			l.TokensPerSecond = *o.TokensPerSecond
		}
		out[tenant] = l
	}
	return out
}

type keyEntry struct {
	sum [32]byte
	key Key
}

// Len is the number of keys.
func (k *Keyring) Len() int {
	if k == nil {
		return 0
	}
	return len(k.keys)
}

// Tenants returns the tenants the keys belong to.
func (k *Keyring) Tenants() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range k.keys {
		if !seen[e.key.Tenant] {
			seen[e.key.Tenant] = true
			out = append(out, e.key.Tenant)
		}
	}
	return out
}

// HasAdmin reports whether an admin key is configured.
func (k *Keyring) HasAdmin() bool {
	for _, e := range k.keys {
		if e.key.Admin {
			return true
		}
	}
	return false
}

// lookup returns the key whose secret is token. Every configured key is
// compared, each in constant time, so the time taken says nothing of which
// key (or how much of one) matched.
func (k *Keyring) lookup(token string) (Key, bool) {
	sum := sha256.Sum256([]byte(token))
	var found Key
	match := 0
	for i := range k.keys {
		eq := constantTimeEqual(sum, k.keys[i].sum)
		if eq == 1 && match == 0 {
			found = k.keys[i].key
		}
		match |= eq
	}
	return found, match == 1
}

// NewKeyring builds a keyring from keys; a secret given twice is an error.
func NewKeyring(keys []Key, overrides map[string]TenantOverride) (*Keyring, error) {
	k := &Keyring{Overrides: overrides}
	seen := map[[32]byte]bool{}
	for _, key := range keys {
		if key.Secret == "" {
			return nil, fmt.Errorf("api keys: empty key")
		}
		sum := sha256.Sum256([]byte(key.Secret))
		if seen[sum] {
			return nil, fmt.Errorf("api keys: a key is given twice (tenant %q)", key.Tenant)
		}
		seen[sum] = true
		k.keys = append(k.keys, keyEntry{sum: sum, key: key})
	}
	return k, nil
}

// tenantNameRE is what a tenant's name may be: it appears in metrics labels
// and program listings.
var tenantNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// plainTenant names the tenant of a key given without one: a tenant of its
// own, named by a digest of the key (never the key itself).
func plainTenant(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "key-" + hex.EncodeToString(sum[:4])
}

// LoadAPIKeys gathers the accepted API keys from flags, the PITSTOP_API_KEYS
// environment variable (comma-separated), admin keys and a keys file (see
// ParseKeysFile). Keys given without a tenant are a tenant each. No keys
// means no authentication.
func LoadAPIKeys(flagKeys, adminKeys []string, file string) (*Keyring, error) {
	var keys []Key
	plain := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			keys = append(keys, Key{Secret: s, Tenant: plainTenant(s)})
		}
	}
	for _, k := range flagKeys {
		plain(k)
	}
	for _, k := range strings.Split(os.Getenv(EnvAPIKeys), ",") {
		plain(k)
	}
	for _, k := range adminKeys {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, Key{Secret: k, Tenant: AdminTenant, Admin: true})
		}
	}
	var limits map[string]TenantOverride
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("api keys file: %w", err)
		}
		fk, fl, err := ParseKeysFile(data)
		if err != nil {
			return nil, fmt.Errorf("api keys file %s: %w", file, err)
		}
		keys = append(keys, fk...)
		limits = fl
	}
	return NewKeyring(keys, limits)
}

// ParseKeysFile reads a keys file: one key a line, then optional fields
//
//	KEY [tenant=NAME] [admin] [max-tools=N] [max-concurrent=N] [tokens-per-s=X]
//
// Blank lines and lines starting with # are skipped. A key without tenant=
// is a tenant of its own; several keys may name one tenant (e.g. while a key
// is rotated), and the tenant's limits may be given on any of its lines but
// must agree where given twice. An admin key without tenant= belongs to the
// tenant "admin". Errors name the line and what is allowed; they never
// quote a key.
func ParseKeysFile(data []byte) ([]Key, map[string]TenantOverride, error) {
	var keys []Key
	overrides := map[string]TenantOverride{}
	given := map[string]string{} // tenant + "\x00" + field → value
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		key := Key{Secret: fields[0]}
		var o TenantOverride
		var set [][2]string
		for _, f := range fields[1:] {
			name, val, hasVal := strings.Cut(f, "=")
			var err error
			switch {
			case name == "admin" && !hasVal:
				key.Admin = true
			case name == "tenant" && hasVal:
				if !tenantNameRE.MatchString(val) {
					return nil, nil, fmt.Errorf("line %d: tenant name %q must match %s", n, val, tenantNameRE)
				}
				key.Tenant = val
			case name == "max-tools" && hasVal:
				o.MaxTools, err = nonNegativeInt(val)
			case name == "max-concurrent" && hasVal:
				o.MaxConcurrent, err = nonNegativeInt(val)
			case name == "tokens-per-s" && hasVal:
				o.TokensPerSecond, err = nonNegativeFloat(val)
			default:
				return nil, nil, fmt.Errorf("line %d: unknown field %q (allowed: tenant=NAME, admin, max-tools=N, max-concurrent=N, tokens-per-s=X)", n, clipField(name))
			}
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: %s=%q: %v", n, name, clipField(val), err)
			}
			if name != "tenant" && name != "admin" {
				set = append(set, [2]string{name, val})
			}
		}
		switch {
		case key.Tenant == "" && key.Admin:
			key.Tenant = AdminTenant
		case key.Tenant == "":
			key.Tenant = plainTenant(key.Secret)
		}
		for _, f := range set {
			g := key.Tenant + "\x00" + f[0]
			if old, ok := given[g]; ok && old != f[1] {
				return nil, nil, fmt.Errorf("line %d: tenant %q: %s=%s disagrees with %s=%s given before", n, key.Tenant, f[0], f[1], f[0], old)
			}
			given[g] = f[1]
		}
		if len(set) > 0 {
			cur := overrides[key.Tenant]
			if o.MaxTools != nil {
				cur.MaxTools = o.MaxTools
			}
			if o.MaxConcurrent != nil {
				cur.MaxConcurrent = o.MaxConcurrent
			}
			if o.TokensPerSecond != nil {
				cur.TokensPerSecond = o.TokensPerSecond
			}
			overrides[key.Tenant] = cur
		}
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	return keys, overrides, nil
}

// clipField shortens a field quoted in an error (a mistyped line may hold a
// key; quote little of it).
func clipField(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

func nonNegativeFloat(s string) (*float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && (v < 0 || v != v || v > 1e15) {
		err = fmt.Errorf("must be a number from 0 to 1e15")
	}
	return &v, err
}

func nonNegativeInt(s string) (*int, error) {
	v, err := strconv.Atoi(s)
	if err == nil && v < 0 {
		err = fmt.Errorf("must not be negative")
	}
	return &v, err
}
