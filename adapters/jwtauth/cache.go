package jwtauth

import (
	"sync"
	"time"

	"github.com/plantstore/plantstore/application"
)

// Bounds of the verified-token cache: entries, and the largest token kept.
// At most about 8 MiB of tokens are held.
const (
	maxCachedTokens     = 4096
	maxCachedTokenBytes = 2048
)

// verifiedCache remembers tokens that passed verification. A client reuses
// its token for many requests, so the common case costs a map lookup instead
// of a signature check and two JSON decodes. An entry keyed by the token's
// exact bytes is used only while the key set that verified it is still
// current and the token's time claims still hold; anything else is verified
// again from scratch, which gives the refusal its reason.
type verifiedCache struct {
	mu      sync.RWMutex
	entries map[string]cachedToken
}

type cachedToken struct {
	principal  application.Principal
	keys       *keyIndex // the key set that verified the token
	validFrom  int64     // unix nanoseconds, leeway applied
	validUntil int64
}

func newVerifiedCache() *verifiedCache {
	return &verifiedCache{entries: make(map[string]cachedToken)}
}

// get returns the principal of a token verified with keys that is valid at now.
func (c *verifiedCache) get(token string, keys *keyIndex, now time.Time) (application.Principal, bool) {
	c.mu.RLock()
	e, ok := c.entries[token]
	c.mu.RUnlock()
	if !ok || e.keys != keys {
		return application.Principal{}, false
	}
	if t := now.UnixNano(); t < e.validFrom || t > e.validUntil {
		return application.Principal{}, false
	}
	return e.principal, true
}

// put remembers a verified token. When the cache is full it starts afresh:
// simpler than an LRU, and a full cache means tokens are not being reused.
func (c *verifiedCache) put(token string, e cachedToken) {
	if len(token) > maxCachedTokenBytes {
		return
	}
	c.mu.Lock()
	if len(c.entries) >= maxCachedTokens {
		c.entries = make(map[string]cachedToken)
	}
	c.entries[token] = e
	c.mu.Unlock()
}

// validity is the time window in which claims c are acceptable: from the
// later of nbf and iat to exp, widened by the leeway.
func validity(c *tokenClaims, leeway time.Duration) (from, until int64) {
	from = -1 << 63
	if c.NotBefore.at != nil {
		from = c.NotBefore.at.Add(-leeway).UnixNano()
	}
	if c.IssuedAt.at != nil {
		from = max(from, c.IssuedAt.at.Add(-leeway).UnixNano())
	}
	until = c.ExpiresAt.at.Add(leeway).UnixNano() // exp is required
	return from, until
}
