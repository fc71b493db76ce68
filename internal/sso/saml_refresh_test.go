package sso_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// auditActions are org's audit entries of action, as owner reads them.
func auditActions(t *testing.T, env *testenv.Env, token, org, action string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range env.Audit(t, token, org, "") {
		if e["action"] == action {
			out = append(out, e)
		}
	}
	return out
}

// TestSAMLMetadataRefresh: a connection made from a metadata URL is read
// again once its metadata is SAMLRefreshEvery old, so a signing
// certificate the IdP rotated signs people in after the refresh (and not
// before); the change is audited; an IdP whose metadata then fails keeps
// the last good metadata (sign-in still works), the failure audited once
// and shown on the connection.
func TestSAMLMetadataRefresh(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		f := newSAMLFixture(t, env, map[string]any{"metadata_url": "{idp}/metadata"})
		email := func() string { return "r-" + testenv.RandomHex(3) + "@" + f.domain }
		// token is a fresh one of the owner's: the clock moves hours.
		token := func() string { return env.Login(t, f.owner.Email, f.owner.Password).Str("access_token") }
		if resp, _ := f.signIn(t, email(), nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in before the rotation answered %d; want 303", resp.StatusCode)
		}
		f.idp.cert = newKeyCert(t) // the IdP rotates: its metadata and its responses
		if resp, _ := f.signIn(t, email(), nil); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a response signed by the new certificate before the refresh answered %d; want 401", resp.StatusCode)
		}
		if _, err := env.SSO.RefreshSAMLMetadata(ctx); err != nil {
			t.Fatal(err)
		}
		if resp, _ := f.signIn(t, email(), nil); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("metadata read again before SAMLRefreshEvery: sign-in answered %d; want 401", resp.StatusCode)
		}
		env.Clock.Advance(sso.SAMLRefreshEvery + 1)
		if n, err := env.SSO.RefreshSAMLMetadata(ctx); err != nil || n < 1 {
			t.Fatalf("refresh = %d, %v; want the connection changed", n, err)
		}
		if resp, _ := f.signIn(t, email(), nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in after the refresh answered %d; want 303", resp.StatusCode)
		}
		if got := auditActions(t, env, token(), f.org, "identity.sso.metadata_refreshed"); len(got) != 1 {
			t.Fatalf("metadata_refreshed entries = %v; want one", got)
		}

		f.idp.down.Store(true)
		for range 2 {
			env.Clock.Advance(sso.SAMLRefreshEvery + 1)
			if _, err := env.SSO.RefreshSAMLMetadata(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if resp, _ := f.signIn(t, email(), nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in after a failed refresh answered %d; want 303 (the last good metadata)", resp.StatusCode)
		}
		if got := auditActions(t, env, token(), f.org, "identity.sso.metadata_refresh_failed"); len(got) != 1 {
			t.Fatalf("metadata_refresh_failed entries = %v; want one for two failed reads", got)
		}
		r := env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/"+f.conn, token(), nil).Want(t, 200)
		if !strings.Contains(r.Str("connection.saml.idp_metadata_error"), "could not be read") || r.Str("connection.saml.idp_metadata_fetched_at") == "" {
			t.Fatalf("connection after a failed refresh = %s; want the error and when it was read", r.Body)
		}
		if !strings.Contains(env.Logs.String(), "saml metadata refresh failed") {
			t.Errorf("the failed refresh is not logged")
		}
		f.idp.down.Store(false)
		env.Clock.Advance(sso.SAMLRefreshEvery + 1)
		if _, err := env.SSO.RefreshSAMLMetadata(ctx); err != nil {
			t.Fatal(err)
		}
		if r := env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/"+f.conn, token(), nil).Want(t, 200); r.Str("connection.saml.idp_metadata_error") != "" {
			t.Fatalf("the error stays after a good read: %s", r.Body)
		}
	})
}
