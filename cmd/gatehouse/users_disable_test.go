package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestUsersDisableEnable: `gatehouse users disable` beside two running
// instances ends the account's sessions (the other instance refuses the
// access token within its revocation poll, the refresh token at once) and
// refuses on that other instance: the right password (the very answer of
// a wrong one), an emailed sign-in link, a password-reset link (the
// password stays), an SSO sign-in (identity.StartProvenSession), the exchange of the account's personal key (the answer
// of an unknown key). Another account is untouched. `users enable` lets
// the account sign in again; its ended sessions stay ended.
func TestUsersDisableEnable(t *testing.T) {
	for _, dbName := range testenv.Databases {
		t.Run(dbName, func(t *testing.T) {
			ctx := context.Background()
			url := testenv.FreshURL(t, dbName)
			db, err := sqlstore.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			a := testenv.New(t, dbName, testenv.Options{DB: db})
			b := a.Another(t) // the same issuer, its own revocation list
			b.Do(t, "GET", "/v1/auth/verify", a.Register(t).Access, nil).Want(t, 200)
			acc, other := a.Register(t), a.Register(t)
			key := a.CreateUserKey(t, acc.Access, map[string]any{"name": "ops key"}).Want(t, 200).Str("api_key.secret")
			a.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": acc.Email}).Want(t, 200)
			magic := a.MailToken(t, acc.Email, testenv.MagicLink)
			a.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": acc.Email}).Want(t, 200)
			reset := a.MailToken(t, acc.Email, "http://web.test/reset-password?token=")

			cli := func(args ...string) {
				t.Helper()
				var stdout, stderr strings.Builder
				if code := run(ctx, args, testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url}), &stdout, &stderr); code != 0 {
					t.Fatalf("gatehouse %v: exit %d, %s", args, code, stderr.String())
				}
			}
			// Tokens no session names: those its personal key and an org key
			// it created were exchanged for.
			team := a.CreateOrg(t, acc, "ops team")
			orgKey := a.CreateOrgKey(t, acc.Token, team, map[string]any{"name": "deploy", "role": "member"}).Str("api_key.secret")
			keyTokens := []string{a.Exchange(t, key).Want(t, 200).Str("access_token"), a.Exchange(t, orgKey).Want(t, 200).Str("access_token")}
			otherKey := a.CreateUserKey(t, other.Access, map[string]any{"name": "theirs"}).Want(t, 200).Str("api_key.secret")
			otherKeyToken := a.Exchange(t, otherKey).Want(t, 200).Str("access_token")

			cli("users", "disable", acc.Email) // on the real clock

			for deadline := time.Now().Add(5 * time.Second); b.Do(t, "GET", "/v1/auth/verify", acc.Access, nil).Status != 401; {
				if time.Now().After(deadline) {
					t.Fatal("the other instance still accepts the disabled account's access token after 5 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			b.Refresh(t, acc.Refresh).Want(t, 401)
			// Each instance learns of the disable at its own next poll.
			for i, tok := range keyTokens {
				for _, e := range []*testenv.Env{a, b} {
					for deadline := time.Now().Add(5 * time.Second); e.Do(t, "GET", "/v1/auth/verify", tok, nil).Status != 401; {
						if time.Now().After(deadline) {
							t.Fatalf("key token %d issued before the disable still verifies after 5 s", i)
						}
						time.Sleep(20 * time.Millisecond)
					}
				}
			}
			b.Do(t, "GET", "/v1/auth/verify", otherKeyToken, nil).Want(t, 200)
			wrong := b.Login(t, acc.Email, "not the password at all").Want(t, 401)
			right := b.Login(t, acc.Email, acc.Password).Want(t, 401)
			if string(right.Body) != string(wrong.Body) {
				t.Errorf("the right password of a disabled account answers %s, a wrong one %s; want the same", right.Body, wrong.Body)
			}
			b.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": magic}).Want(t, 401)
			b.Call(t, "POST", "/v1/auth/recover/verify", "", map[string]string{"token": reset, "new_password": "a new passphrase " + testenv.RandomHex(3)}).Want(t, 401)
			badKey := b.Exchange(t, "svc_u_"+strings.Repeat("x", 43)).Want(t, 401)
			if got := b.Exchange(t, key).Want(t, 401); string(got.Body) != string(badKey.Body) {
				t.Errorf("a disabled account's key answers %s, an unknown key %s; want the same", got.Body, badKey.Body)
			}
			// SSO: a person the workspace's identity provider proved.
			proven := identity.Proven{UserID: acc.UserID, Email: acc.Email, OrgID: acc.OrgID}
			if _, err := b.Svc.StartProvenSession(ctx, b.Store, proven, gatehouse.SessionMeta{}); err == nil {
				t.Error("an SSO sign-in of the disabled account opened a session")
			}
			b.Login(t, other.Email, other.Password).Want(t, 200)
			b.Do(t, "GET", "/v1/auth/verify", other.Access, nil).Want(t, 200)

			b.Exchange(t, orgKey).Want(t, 401)

			// The servers' clock (fixed at the test's start) moves past the
			// disable's second: a token iat has whole seconds, and one issued
			// in the second of the disable is refused with those before it.
			a.Clock.Advance(time.Since(a.Clock.Now()) + time.Second)
			cli("users", "enable", acc.Email)
			b.Login(t, acc.Email, acc.Password).Want(t, 200) // the reset did not take
			for _, k := range []string{key, orgKey} {
				tok := b.Exchange(t, k).Want(t, 200).Str("access_token")
				a.Do(t, "GET", "/v1/auth/verify", tok, nil).Want(t, 200)
				b.Do(t, "GET", "/v1/auth/verify", tok, nil).Want(t, 200)
			}
			for i, tok := range keyTokens {
				if got := b.Do(t, "GET", "/v1/auth/verify", tok, nil).Status; got != 401 {
					t.Errorf("key token %d issued before the disable works again after enable: %d", i, got)
				}
			}
			if _, err := b.Svc.StartProvenSession(ctx, b.Store, proven, gatehouse.SessionMeta{}); err != nil {
				t.Errorf("an SSO sign-in after enable: %v", err)
			}
			b.Refresh(t, acc.Refresh).Want(t, 401)
			b.Do(t, "GET", "/v1/auth/verify", acc.Access, nil).Want(t, 401)
		})
	}
}
