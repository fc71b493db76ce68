package identity_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// refreshFrom presents refresh from client IP ip with User-Agent ua (""
// keeps Go's) and returns the status.
func refreshFrom(t *testing.T, env *testenv.Env, ip, ua, refresh string) int {
	t.Helper()
	req, err := http.NewRequest("POST", env.URL+"/v1/auth/refresh", strings.NewReader(`{"refresh_token": "`+refresh+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	res, err := env.From(t, ip).Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestSigninRefreshReuseOtherClient: a rotated refresh token presented
// again inside the race window by a client other than the session's in
// both IP and User-Agent revokes the session (ASVS 10.4.5, issue 13 item
// 8d): the successor and the access token stop working. The same browser
// (two tabs), or a client that changed only its IP or only its
// User-Agent, only gets 401.
func TestSigninRefreshReuseOtherClient(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		const otherIP, otherUA = "127.0.0.2", "Mozilla/5.0 (X11; Linux x86_64) Thief/1.0"
		for _, c := range []struct {
			name, ip, ua string
			revokes      bool
		}{
			{"same client", "127.0.0.1", "", false},
			{"other IP only", otherIP, "", false},
			{"other User-Agent only", "127.0.0.1", otherUA, false},
			{"other IP and User-Agent", otherIP, otherUA, true},
		} {
			t.Run(c.name, func(t *testing.T) {
				login := env.Login(t, a.Email, a.Password).Want(t, 200)
				old := login.Str("refresh_token")
				next := env.Refresh(t, old).Want(t, 200)
				env.Clock.Advance(5 * time.Second) // inside the 10-second window
				if got := refreshFrom(t, env, c.ip, c.ua, old); got != 401 {
					t.Fatalf("reuse: status %d; want 401", got)
				}
				want := 200
				if c.revokes {
					want = 401
				}
				env.Call(t, "GET", "/v1/auth/me", next.Str("access_token"), nil).Want(t, want)
				env.Refresh(t, next.Str("refresh_token")).Want(t, want)
			})
		}
	})
}
