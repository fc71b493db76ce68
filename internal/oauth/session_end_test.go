package oauth_test

import (
	"net/url"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestGrantTokenSessionEnd: an OAuth grant's access tokens never outlive
// its session's absolute lifetime (GATEHOUSE_SESSION_MAX_AGE, issue 23
// item 7): with 30 minutes, the code exchange answers 30 minutes, a
// refresh 20 minutes later the 10 that are left.
func TestGrantTokenSessionEnd(t *testing.T) {
	const maxAge = 30 * time.Minute
	testenv.RunWith(t, testenv.Options{SessionMaxAge: maxAge}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		verifier := oauth2.GenerateVerifier()
		first := tokenPost(t, env, exchangeForm(clientID, approvedCode(t, env, b, a, clientID, verifier), verifier)).Want(t, 200)
		if got := first.Get("expires_in"); got != float64(maxAge/time.Second) {
			t.Errorf("code exchange expires_in = %v; want %v", got, maxAge.Seconds())
		}
		env.Clock.Advance(20 * time.Minute)
		next := tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Str("refresh_token")}, "client_id": {clientID}}).Want(t, 200)
		if got := next.Get("expires_in"); got != float64(10*60) {
			t.Errorf("refresh expires_in = %v; want 600 (the grant session's end)", got)
		}
		exp := time.Unix(int64(testenv.Claims(t, next.Str("access_token"))["exp"].(float64)), 0)
		if want := env.Clock.Now().Add(10 * time.Minute); !exp.Equal(want) {
			t.Errorf("refresh token exp %v; want %v", exp, want)
		}
	})
}
