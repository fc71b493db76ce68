package accounts

import (
	"sync"
	"time"
)

// userCache holds recently read users for GET /v1/auth/verify, the hottest
// read, for a short time. Changes made through this instance drop the entry
// at once; another instance's changes show within userCacheTTL.
type userCache struct {
	mu sync.RWMutex
	m  map[string]cachedUser
}

type cachedUser struct {
	u  User
	at time.Time
}

const (
	userCacheTTL = 2 * time.Second
	userCacheMax = 100_000
)

func (c *userCache) get(id string, now time.Time) (*User, bool) {
	c.mu.RLock()
	e, ok := c.m[id]
	c.mu.RUnlock()
	if !ok || now.Sub(e.at) >= userCacheTTL || now.Before(e.at) {
		return nil, false
	}
	u := e.u
	return &u, true
}

func (c *userCache) put(u *User, now time.Time) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= userCacheMax {
		c.m = make(map[string]cachedUser)
	}
	c.m[u.ID] = cachedUser{u: *u, at: now}
	c.mu.Unlock()
}

func (c *userCache) drop(id string) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}
