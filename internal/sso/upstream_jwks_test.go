package sso_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignInJWKSReadLimited: ID tokens signed with a key the provider's
// JWK Set does not hold (a forgery, or a key not yet published) make the
// sign-in callback read the set again at most once per
// sso.JWKSMinInterval, however many arrive; a valid token is verified
// with the keys held, without a read.
func TestSignInJWKSReadLimited(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		good := func() map[string]any {
			return map[string]any{"sub": "s-" + testenv.RandomHex(3), "email": "p-" + testenv.RandomHex(3) + "@" + f.domain}
		}
		if resp, _ := f.signIn(t, good()); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("a valid sign-in answered %d; want 303", resp.StatusCode)
		}
		if n := f.idp.JWKSReads(); n != 1 {
			t.Fatalf("the JWK Set was read %d times for the first sign-in; want 1", n)
		}
		forged, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		f.idp.SignWith(forged)
		for range 5 {
			if resp, _ := f.signIn(t, good()); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a token of an unknown key answered %d; want 401", resp.StatusCode)
			}
		}
		if n := f.idp.JWKSReads(); n != 1 {
			t.Fatalf("5 tokens of an unknown key within %v read the JWK Set %d times in all; want 1 (no read again)", sso.JWKSMinInterval, n)
		}
		env.Clock.Advance(sso.JWKSMinInterval + 1)
		for range 3 {
			f.signIn(t, good())
		}
		if n := f.idp.JWKSReads(); n != 2 {
			t.Fatalf("after %v, 3 tokens of an unknown key read the JWK Set %d times in all; want 2 (once more)", sso.JWKSMinInterval, n)
		}
		f.idp.SignWith(nil)
		if resp, _ := f.signIn(t, good()); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("a valid sign-in after the forgeries answered %d; want 303", resp.StatusCode)
		}
		if n := f.idp.JWKSReads(); n != 2 {
			t.Fatalf("a valid token read the JWK Set again (%d reads); want the keys held", n)
		}
	})
}
