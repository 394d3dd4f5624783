package runtime

import (
	"math"
	"sync"
	"time"
)

// TenantLimits bound what one tenant (the owner of an API key) may use of
// the server. A zero field is no limit.
type TenantLimits struct {
	// MaxTools caps the webhook tools the tenant has registered.
	MaxTools int
	// MaxConcurrent caps the tenant's chat calls and tool invokes in
	// flight; one more is answered 429.
	MaxConcurrent int
	// TokensPerSecond caps the prompt and completion tokens the tenant's
	// calls use, averaged over TokenBurst: a token bucket of
	// TokensPerSecond·TokenBurst tokens that a call may overdraw once (its
	// prompt is charged when it starts, its output as it finishes); while
	// the bucket is overdrawn new calls get 429 with the time it takes to
	// refill.
	TokensPerSecond float64
}

// TokenBurst is how many seconds of a tenant's token rate its bucket holds.
const TokenBurst = 10 * time.Second

// DefaultTenant names the tenant of calls made without one (a server
// without API keys, or Go callers that give none) in metrics.
const DefaultTenant = "default"

// tenantTable holds each tenant's limits and use. Safe for concurrent use.
type tenantTable struct {
	mu       sync.Mutex
	defaults TenantLimits
	limits   map[string]TenantLimits
	rows     map[string]*tenantUse
}

// tenantUse is what a tenant uses now.
type tenantUse struct {
	active int       // calls and invokes in flight
	bucket float64   // tokens left; negative: overdrawn
	filled time.Time // when bucket was last brought up to date
}

func newTenantTable() *tenantTable {
	return &tenantTable{limits: map[string]TenantLimits{}, rows: map[string]*tenantUse{}}
}

// set replaces the limits: defaults for tenants not in perTenant. Calls in
// flight keep running; the new limits apply to the next ones.
func (t *tenantTable) set(defaults TenantLimits, perTenant map[string]TenantLimits) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.defaults = defaults
	t.limits = make(map[string]TenantLimits, len(perTenant))
	for k, v := range perTenant {
		t.limits[k] = v
	}
}

// limitsOf returns a tenant's limits.
func (t *tenantTable) limitsOf(name string) TenantLimits {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limitsLocked(name)
}

func (t *tenantTable) limitsLocked(name string) TenantLimits {
	if l, ok := t.limits[name]; ok {
		return l
	}
	return t.defaults
}

// use returns a tenant's row with its bucket refilled up to now.
func (t *tenantTable) use(name string, l TenantLimits, now time.Time) *tenantUse {
	u := t.rows[name]
	capacity := l.TokensPerSecond * TokenBurst.Seconds()
	if u == nil {
		u = &tenantUse{bucket: capacity, filled: now}
		t.rows[name] = u
	}
	if l.TokensPerSecond > 0 {
		u.bucket = math.Min(capacity, u.bucket+now.Sub(u.filled).Seconds()*l.TokensPerSecond)
	}
	u.filled = now
	return u
}

// admit takes a slot for one call or invoke of the tenant, or says why not
// and when to try again (an ErrRateLimited *Error with RetryAfter).
func (t *tenantTable) admit(name string, now time.Time) *Error {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.limitsLocked(name)
	u := t.use(name, l, now)
	if l.MaxConcurrent > 0 && u.active >= l.MaxConcurrent {
		e := errorf(ErrRateLimited, "", "rate_limit_exceeded",
			"Too many requests in flight: your limit is %d concurrent calls. Retry when one has finished.", l.MaxConcurrent)
		e.RetryAfter = time.Second
		return e
	}
	if l.TokensPerSecond > 0 && u.bucket < 0 {
		wait := time.Duration(-u.bucket / l.TokensPerSecond * float64(time.Second))
		e := errorf(ErrRateLimited, "", "rate_limit_exceeded",
			"Token rate limit reached: your limit is %g tokens per second. Retry in %.1fs.", l.TokensPerSecond, wait.Seconds())
		e.RetryAfter = wait
		return e
	}
	u.active++
	return nil
}

// release gives back a slot taken by admit.
func (t *tenantTable) release(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if u := t.rows[name]; u != nil && u.active > 0 {
		u.active--
	}
}

// charge books tokens a tenant's call used.
func (t *tenantTable) charge(name string, tokens int, now time.Time) {
	if tokens <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.limitsLocked(name)
	if l.TokensPerSecond <= 0 {
		return
	}
	u := t.use(name, l, now)
	u.bucket -= float64(tokens)
}

// active returns the calls in flight per tenant (for metrics).
func (t *tenantTable) active() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int, len(t.rows))
	for k, u := range t.rows {
		out[k] = u.active
	}
	return out
}

// tenantLabel is a tenant's metrics label.
func tenantLabel(name string) string {
	if name == "" {
		return DefaultTenant
	}
	return name
}

// programKey is the program table's and the engine's key of a tenant's
// program: programs are namespaced per tenant, so one tenant's id names a
// different program in another tenant. Without a tenant the key is the id.
func programKey(tenant, id string) string {
	if tenant == "" {
		return id
	}
	return tenant + "\x00" + id
}
