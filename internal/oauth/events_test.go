package oauth_test

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestTokenEvents: the token endpoint's code and refresh exchanges are
// sign-in events naming the method, the client and the user; a refused
// refresh is a failure with its OAuth error; no token reaches the log.
func TestTokenEvents(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"client_name": "Event CLI", "redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		cfg := oauthConfig(env, clientID)
		verifier := oauth2.GenerateVerifier()
		authURL := cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier))
		code := consentAt(t, b, authURL, a.OrgID).Query().Get("code")
		tok := tokenPost(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
			"client_id": {clientID}, "code_verifier": {verifier}}).Want(t, 200)
		fresh := tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Str("refresh_token")}, "client_id": {clientID}}).Want(t, 200)
		bad := tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}, "client_id": {clientID}})
		if bad.Status != 400 {
			t.Fatalf("bad refresh: %d; want 400", bad.Status)
		}

		for _, c := range []struct {
			r      *testenv.Resp
			event  string
			fields []string
		}{
			{tok, "auth.signin.success", []string{"method=oauth_code", "client_id=" + clientID, "user_id=" + a.UserID}},
			{fresh, "auth.signin.success", []string{"method=oauth_refresh", "user_id=" + a.UserID}},
			{bad, "auth.signin.failure", []string{"method=oauth_refresh", "reason=\"invalid_grant: "}},
		} {
			line := ""
			for _, l := range strings.Split(env.Logs.String(), "\n") {
				if strings.Contains(l, " event="+c.event+" ") && strings.Contains(l, " request_id="+c.r.Header.Get("X-Request-Id")+" ") {
					line = l
				}
			}
			if line == "" {
				t.Errorf("no %s line for request %s", c.event, c.r.Header.Get("X-Request-Id"))
				continue
			}
			for _, f := range c.fields {
				if !strings.Contains(line, " "+f) {
					t.Errorf("line %q has no %s", line, f)
				}
			}
		}
		logs := env.Logs.String()
		for _, s := range []string{code, verifier, tok.Str("access_token"), tok.Str("refresh_token"), fresh.Str("refresh_token")} {
			if strings.Contains(logs, s) {
				t.Errorf("the log holds a code, verifier or token")
			}
		}
	})
}
