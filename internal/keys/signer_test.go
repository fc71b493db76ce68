package keys_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
)

// TestSignerSeam: the service's one signer (the access tokens' HS256
// secret joined to the ring) signs and verifies each algorithm, an access
// token it issued verifies as HS256 and under no other algorithm, what one
// algorithm signed never verifies as another (RFC 8725 §3.1), a tampered
// or unknown-kid signature is refused, a rotated ring key verifies until
// it leaves the JWK Set and not after, and the secret is never published.
func TestSignerSeam(t *testing.T) {
	each(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		s := env.Signer
		if got := s.Algorithms(); !slices.Equal(got, []string{keys.HS256, keys.RS256, keys.ES256}) {
			t.Errorf("Algorithms = %v; want HS256, RS256, ES256", got)
		}
		signed := map[string]string{}
		for _, alg := range s.Algorithms() {
			payload := []byte(`{"alg_test":"` + alg + `"}`)
			jws, err := s.Sign(ctx, alg, payload)
			if err != nil {
				t.Fatalf("Sign %s: %v", alg, err)
			}
			if got, err := s.Verify(ctx, alg, jws); err != nil || string(got) != string(payload) {
				t.Errorf("Verify %s of its own = %q, %v; want the payload", alg, got, err)
			}
			signed[alg] = jws
		}
		for signedWith, jws := range signed {
			for _, alg := range s.Algorithms() {
				if alg == signedWith {
					continue
				}
				if _, err := s.Verify(ctx, alg, jws); err == nil {
					t.Errorf("a JWS signed with %s verifies as %s", signedWith, alg)
				}
			}
			head, rest, _ := strings.Cut(jws, ".")
			body, sig, _ := strings.Cut(rest, ".")
			flipped := []byte(sig)
			flipped[3] ^= 1
			if _, err := s.Verify(ctx, signedWith, head+"."+body+"."+string(flipped)); err == nil {
				t.Errorf("a tampered %s signature verifies", signedWith)
			}
		}
		if _, err := s.Sign(ctx, "HS512", []byte("{}")); err == nil {
			t.Error("Sign HS512 succeeded; want no such key")
		}

		// The access token of a sign-in: HS256 through the seam.
		a := env.Register(t)
		if _, err := s.Verify(ctx, keys.HS256, a.Access); err != nil {
			t.Errorf("the access token does not verify as HS256: %v", err)
		}
		if _, err := token.Verify(ctx, s, env.URL, env.Clock.Now(), a.Access); err != nil {
			t.Errorf("token.Verify of the access token: %v", err)
		}
		// A ring-signed JWS with an access token's claims is no access token.
		payload, _ := json.Marshal(testenv.Claims(t, a.Access))
		forged, err := s.Sign(ctx, keys.RS256, payload)
		if err != nil {
			t.Fatal(err)
		}
		env.Do(t, "GET", "/v1/auth/verify", forged, nil).Want(t, 401)
		env.Do(t, "GET", "/v1/auth/verify", a.Access, nil).Want(t, 200)

		// A rotated key verifies what it signed until it leaves the set.
		old := signed[keys.ES256]
		if _, err := env.Keys.Rotate(ctx, keys.ES256, keys.Ahead); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Verify(ctx, keys.ES256, old); err != nil {
			t.Errorf("a rotated key's JWS refused while published: %v", err)
		}
		env.Clock.Advance(keys.Ahead + keys.Keep + time.Second)
		if _, err := s.Verify(ctx, keys.ES256, old); err == nil {
			t.Error("a JWS of a key no longer published verifies")
		}
		set, err := s.PublicKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range set.Keys {
			if k.Algorithm == keys.HS256 || k.Algorithm == "" {
				t.Errorf("the JWK Set holds a key of alg %q", k.Algorithm)
			}
		}
	})
}
