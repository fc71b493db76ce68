package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestKeysRotate runs `gatehouse keys rotate` beside two running
// instances: each publishes the new keys within its reload interval,
// without a restart, goes on signing with the old ones, and signs with the
// new ones once keys.Ahead has passed; a token signed before the rotation
// keeps verifying with the JWK Set, whose old keys stay published until
// keys.Keep has passed (the instances' clock advanced) and then leave it.
// With -now the new key signs at once.
func TestKeysRotate(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			url := testenv.FreshURL(t, db)
			open := func() *sqlstore.DB {
				s, err := sqlstore.Open(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			adb := open()
			bdb := adb // SQLite: one file, one writer per process
			if db == "postgres" {
				bdb = open()
			}
			a := testenv.New(t, db, testenv.Options{DB: adb})
			b := testenv.New(t, db, testenv.Options{DB: bdb})
			ctx := context.Background()
			oldRS, err := a.Keys.Sign(ctx, keys.RS256, []byte(`{"sub":"before"}`))
			if err != nil {
				t.Fatal(err)
			}
			before := publishedKids(t, a)
			if len(before) != 2 {
				t.Fatalf("%d keys before rotation; want 2", len(before))
			}

			var stdout, stderr bytes.Buffer
			code := run(ctx, []string{"keys", "rotate"}, testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url}), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("gatehouse keys rotate: exit %d, stderr %q", code, stderr.String())
			}
			added := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				alg, kid, _ := strings.Cut(line, "\t")
				added[alg] = kid
			}
			if len(added) != 2 || added[keys.RS256] == "" || added[keys.ES256] == "" || before[added[keys.RS256]] != "" {
				t.Fatalf("keys rotate printed %q; want a new kid per algorithm", stdout.String())
			}
			if !strings.Contains(stderr.String(), "published now and sign from") {
				t.Errorf("stderr %q; want when the new keys sign", stderr.String())
			}
			// The old keys stop signing keys.Ahead after the command (its
			// time), when the new ones start, and stay published a day
			// (keys.Keep) after that, on the services' clocks (one per Env).
			var retired int64
			if err := adb.DB().QueryRow(`SELECT max(retired_at) FROM signing_keys`).Scan(&retired); err != nil {
				t.Fatal(err)
			}
			rotated := time.UnixMicro(retired)
			for _, env := range []*testenv.Env{a, b} {
				deadline := time.Now().Add(5 * time.Second)
				for kids := publishedKids(t, env); kids[added[keys.RS256]] == "" || kids[added[keys.ES256]] == ""; kids = publishedKids(t, env) {
					if time.Now().After(deadline) {
						t.Fatalf("an instance does not publish the new keys after 5 s: %v", kids)
					}
					time.Sleep(20 * time.Millisecond)
				}
				for _, alg := range keys.Algs {
					if signedKid(t, env, alg) == added[alg] {
						t.Errorf("%s: an instance signs with the new key before keys.Ahead", alg)
					}
				}
				env.Clock.Advance(rotated.Sub(env.Clock.Now()))
				for _, alg := range keys.Algs {
					if got := signedKid(t, env, alg); got != added[alg] {
						t.Errorf("%s: an instance signs with %s at keys.Ahead; want %s", alg, got, added[alg])
					}
				}
			}
			for _, env := range []*testenv.Env{a, b} {
				env.Clock.Advance(rotated.Add(23 * time.Hour).Sub(env.Clock.Now())) // documented: a day
				kids := publishedKids(t, env)
				if len(kids) != 4 {
					t.Errorf("%d keys published 23 h after the rotation; want the 2 old and the 2 new", len(kids))
				}
				if !verifies(t, env, oldRS) {
					t.Errorf("a token signed before the rotation no longer verifies with the JWK Set")
				}
				env.Clock.Advance(2 * time.Hour)
				kids = publishedKids(t, env)
				if len(kids) != 2 || kids[added[keys.RS256]] == "" || kids[added[keys.ES256]] == "" {
					t.Errorf("published 25 h after the rotation: %v; want only the new keys %v", kids, added)
				}
			}

			stdout.Reset()
			stderr.Reset()
			if code := run(ctx, []string{"keys", "rotate", "-alg", "HS256"}, testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url}), &stdout, &stderr); code != 2 {
				t.Errorf("keys rotate -alg HS256: exit %d; want 2", code)
			}
			if code := run(ctx, []string{"keys", "rotate", "-alg", "ES256", "-now"}, testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url}), &stdout, &stderr); code != 0 {
				t.Fatalf("keys rotate -alg ES256 -now: exit %d, stderr %q", code, stderr.String())
			}
			_, now, _ := strings.Cut(strings.TrimSpace(stdout.String()), "\t")
			if got := strings.Count(stdout.String(), "\n"); got != 1 || !strings.HasPrefix(stdout.String(), "ES256\t") {
				t.Errorf("keys rotate -alg ES256 -now printed %q; want one ES256 kid", stdout.String())
			}
			deadline := time.Now().Add(5 * time.Second)
			for signedKid(t, a, keys.ES256) != now {
				if time.Now().After(deadline) {
					t.Fatalf("-now: the instance still signs with %s after 5 s", signedKid(t, a, keys.ES256))
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// publishedKids returns the kids and algs of env's JWK Set.
func publishedKids(t *testing.T, env *testenv.Env) map[string]string {
	t.Helper()
	set := jwkSet(t, env)
	m := map[string]string{}
	for _, k := range set.Keys {
		m[k.KeyID] = k.Algorithm
	}
	return m
}

func jwkSet(t *testing.T, env *testenv.Env) jose.JSONWebKeySet {
	t.Helper()
	r := env.Do(t, "GET", keys.JWKSPath, "", nil).Want(t, 200)
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(r.Body, &set); err != nil {
		t.Fatal(err)
	}
	return set
}

// signedKid signs with env's ring and returns the kid in the header.
func signedKid(t *testing.T, env *testenv.Env, alg string) string {
	t.Helper()
	jws, err := env.Keys.Sign(context.Background(), alg, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := jose.ParseSigned(jws, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	return p.Signatures[0].Header.KeyID
}

// verifies reports whether jws verifies with a key of env's JWK Set.
func verifies(t *testing.T, env *testenv.Env, jws string) bool {
	t.Helper()
	p, err := jose.ParseSigned(jws, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	set := jwkSet(t, env)
	ks := set.Key(p.Signatures[0].Header.KeyID)
	if len(ks) != 1 {
		return false
	}
	_, err = p.Verify(ks[0])
	return err == nil
}

// TestKeysRotateHS256: `gatehouse keys rotate --hs256` beside a running
// instance configured with the same GATEHOUSE_JWT_SECRET adds an HS256
// key and nothing else; the instance signs access tokens with it after its
// reload, without a restart, and the token signed before still verifies.
// The command warns that the shared secret stops signing.
func TestKeysRotateHS256(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			url := testenv.FreshURL(t, db)
			s, err := sqlstore.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			a := testenv.New(t, db, testenv.Options{DB: s})
			acc := a.Register(t)
			env := map[string]string{"GATEHOUSE_DATABASE_URL": url, "GATEHOUSE_JWT_SECRET": testenv.JWTSecret}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"keys", "rotate", "--hs256", "-alg", "ES256"}, testGetenv(env), &stdout, &stderr); code != 2 {
				t.Errorf("--hs256 with -alg: exit %d; want 2", code)
			}
			stdout.Reset()
			if code := run(context.Background(), []string{"keys", "rotate", "--hs256"}, testGetenv(env), &stdout, &stderr); code != 0 {
				t.Fatalf("gatehouse keys rotate --hs256: exit %d, stderr %q", code, stderr.String())
			}
			alg, kid, _ := strings.Cut(strings.TrimSpace(stdout.String()), "\t")
			if alg != keys.HS256 || kid == "" || strings.Contains(kid, "\n") {
				t.Fatalf("stdout %q; want one line HS256<TAB>kid", stdout.String())
			}
			if !strings.Contains(stderr.String(), "GATEHOUSE_JWT_SECRET") {
				t.Errorf("stderr %q; want the warning about the shared secret", stderr.String())
			}
			// It signs keys.Ahead after the command.
			var from int64
			if err := s.DB().QueryRow(`SELECT created_at FROM signing_keys WHERE kid = $1`, kid).Scan(&from); err != nil {
				t.Fatal(err)
			}
			a.Clock.Advance(time.UnixMicro(from).Sub(a.Clock.Now()))
			deadline := time.Now().Add(5 * time.Second)
			for {
				tok := a.Login(t, acc.Email, acc.Password).Want(t, 200).Str("access_token")
				if hsKID(t, tok) == kid {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the instance still signs with kid %q, not the rotated %q", hsKID(t, tok), kid)
				}
				time.Sleep(20 * time.Millisecond)
			}
			a.Do(t, "GET", "/v1/auth/verify", acc.Access, nil).Want(t, 200)
		})
	}
}

// hsKID returns the kid in an access token's header.
func hsKID(t *testing.T, tok string) string {
	t.Helper()
	p, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		t.Fatal(err)
	}
	return p.Signatures[0].Header.KeyID
}
