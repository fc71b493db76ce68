package testenv

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// Login signs in with email and password and returns the answer.
func (e *Env) Login(t testing.TB, email, password string) *Resp {
	t.Helper()
	return e.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": email, "password": password})
}

// Refresh presents a refresh token and returns the answer.
func (e *Env) Refresh(t testing.TB, refresh string) *Resp {
	t.Helper()
	return e.Call(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": refresh})
}

// NewSession signs a in again and returns the new session's access and
// refresh tokens.
func (e *Env) NewSession(t testing.TB, a *Account) (access, refresh string) {
	t.Helper()
	r := e.Login(t, a.Email, a.Password).Want(t, 200)
	return r.Str("access_token"), r.Str("refresh_token")
}

// LockOut makes ten wrong sign-ins for email from the env's client IP,
// which locks the account when the abuse limits are on.
func (e *Env) LockOut(t testing.TB, email string) {
	t.Helper()
	for i := 1; i <= 10; i++ {
		if r := e.Login(t, email, "wrong-password"); r.Status != 401 {
			t.Fatalf("failed login %d: status = %d, body %s; want 401", i, r.Status, r.Body)
		}
	}
}

// CreateUserKey creates a user API key with body as bearer and returns the
// answer.
func (e *Env) CreateUserKey(t testing.TB, bearer string, body any) *Resp {
	t.Helper()
	return e.Do(t, "POST", "/v1/me/api-keys", bearer, body).Want(t, 200)
}

// KeyToken creates a user key for a's personal org and exchanges it; it
// returns the access token of the exchange (not a full session).
func (e *Env) KeyToken(t testing.TB, a *Account) string {
	t.Helper()
	secret := e.CreateUserKey(t, a.Access, map[string]any{"name": "test key"}).Str("api_key.secret")
	return e.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200).Str("access_token")
}

// Exchange exchanges an API key secret and returns the answer.
func (e *Env) Exchange(t testing.TB, secret string) *Resp {
	t.Helper()
	return e.Call(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret})
}

// DialFrom returns a transport that dials the test server from ip: every
// 127.0.0.0/8 address reaches a loopback listener, so each one is another
// client IP.
func DialFrom(t testing.TB, ip string) *http.Transport {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// From returns a copy of the env whose requests come from client IP ip.
func (e *Env) From(t testing.TB, ip string) *Env {
	c := *e
	c.Client = &http.Client{Transport: DialFrom(t, ip), Timeout: 10 * time.Second}
	return &c
}
