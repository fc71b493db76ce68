package keys_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gatehouse/gatehouse/internal/app"
	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// fresh opens a new, empty database of its own on db (the key ring is
// one per database, so tests that count keys do not share one).
func fresh(t *testing.T, db string) *sqlstore.DB {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), testenv.FreshURL(t, db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// each runs fn on each database, on a service of a fresh database.
func each(t *testing.T, fn func(t *testing.T, env *testenv.Env)) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) { fn(t, testenv.New(t, db, testenv.Options{DB: fresh(t, db)})) })
	}
}

// jwks fetches env's JWK Set, raw (each key's members) and parsed.
func jwks(t *testing.T, env *testenv.Env) ([]map[string]any, jose.JSONWebKeySet) {
	t.Helper()
	r := env.Do(t, "GET", keys.JWKSPath, "", nil).Want(t, 200)
	if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("Cache-Control %q; want public, max-age=300", cc)
	}
	var raw struct{ Keys []map[string]any }
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(r.Body, &set); err != nil {
		t.Fatal(err)
	}
	return raw.Keys, set
}

func kids(set jose.JSONWebKeySet) map[string]string {
	m := map[string]string{}
	for _, k := range set.Keys {
		m[k.KeyID] = k.Algorithm
	}
	return m
}

// TestKeyRingFirstStart starts two instances at once on an empty
// database: they end with exactly one RS256 and one ES256 key, and both
// publish the same two.
func TestKeyRingFirstStart(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			url := testenv.FreshURL(t, db)
			var dbs [2]*sqlstore.DB
			for i := range dbs {
				// SQLite: one file, one writer per process, so one pool.
				if i == 1 && db == "sqlite" {
					dbs[1] = dbs[0]
					continue
				}
				s, err := sqlstore.Open(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				dbs[i] = s
			}
			var in [2]*testenv.Env
			var wg sync.WaitGroup
			for i := range in {
				wg.Add(1)
				go func() {
					defer wg.Done()
					in[i] = testenv.New(t, db, testenv.Options{DB: dbs[i]})
				}()
			}
			wg.Wait()
			if in[0] == nil || in[1] == nil {
				t.Fatal("an instance did not start")
			}
			var rs, es int
			if err := dbs[0].DB().QueryRow(`SELECT
				(SELECT count(*) FROM signing_keys WHERE alg = 'RS256'), (SELECT count(*) FROM signing_keys WHERE alg = 'ES256')`).Scan(&rs, &es); err != nil {
				t.Fatal(err)
			}
			if rs != 1 || es != 1 {
				t.Errorf("%d RS256 and %d ES256 keys; want 1 and 1", rs, es)
			}
			_, a := jwks(t, in[0])
			_, b := jwks(t, in[1])
			if len(a.Keys) != 2 || len(kids(a)) != 2 || !sameKids(kids(a), kids(b)) {
				t.Errorf("JWK Sets %v and %v; want the same two keys", kids(a), kids(b))
			}
		})
	}
}

func sameKids(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestJWKS checks the published keys' members (and that no private one is
// there), that what the ring signs verifies with them, and that both
// discovery documents name the set.
func TestJWKS(t *testing.T) {
	each(t, func(t *testing.T, env *testenv.Env) {
		raw, set := jwks(t, env)
		if len(raw) != 2 {
			t.Fatalf("%d keys; want 2", len(raw))
		}
		want := map[string][]string{"RS256": {"n", "e"}, "ES256": {"crv", "x", "y"}}
		for _, k := range raw {
			alg, _ := k["alg"].(string)
			members, ok := want[alg]
			if !ok {
				t.Errorf("key of alg %q", alg)
				continue
			}
			delete(want, alg)
			kty := map[string]string{"RS256": "RSA", "ES256": "EC"}[alg]
			if k["kty"] != kty || k["use"] != "sig" || k["kid"] == "" || k["kid"] == nil {
				t.Errorf("%s key: kty %v use %v kid %v; want %s, sig, a kid", alg, k["kty"], k["use"], k["kid"], kty)
			}
			for _, m := range members {
				if s, _ := k[m].(string); s == "" {
					t.Errorf("%s key lacks %q", alg, m)
				}
			}
			if alg == "ES256" && k["crv"] != "P-256" {
				t.Errorf("ES256 key on curve %v", k["crv"])
			}
			for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
				if _, ok := k[private]; ok {
					t.Errorf("%s key publishes private member %q", alg, private)
				}
			}
		}
		if len(want) != 0 {
			t.Errorf("no key for %v", want)
		}
		for _, alg := range []string{keys.RS256, keys.ES256} {
			verify(t, env, set, alg)
		}
		meta := env.Do(t, "GET", "/.well-known/oauth-authorization-server", "", nil).Want(t, 200)
		if got := meta.Str("jwks_uri"); got != env.URL+keys.JWKSPath {
			t.Errorf("jwks_uri %q; want %q", got, env.URL+keys.JWKSPath)
		}
	})
}

// verify signs with env's ring and checks the signature against set,
// returning the kid it was signed with.
func verify(t *testing.T, env *testenv.Env, set jose.JSONWebKeySet, alg string) string {
	t.Helper()
	payload := []byte(`{"sub":"u_1","alg_test":"` + alg + `"}`)
	jws, err := env.Keys.Sign(context.Background(), alg, payload)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jose.ParseSigned(jws, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := parsed.Signatures[0].Header
	if h.Algorithm != alg {
		t.Errorf("signed with %s; want %s", h.Algorithm, alg)
	}
	ks := set.Key(h.KeyID)
	if len(ks) != 1 {
		t.Fatalf("kid %q of the %s signature: %d keys in the JWK Set", h.KeyID, alg, len(ks))
	}
	got, err := parsed.Verify(ks[0])
	if err != nil || string(got) != string(payload) {
		t.Errorf("%s signature does not verify with the JWK Set: %v", alg, err)
	}
	return h.KeyID
}

// TestPrivateKeysSealed reads the table raw: no private key is stored in
// clear, and a sealed key moved to another row (kid) does not open: a
// new instance (app.OpenKeys, as app.New and the command) refuses it.
func TestPrivateKeysSealed(t *testing.T) {
	each(t, func(t *testing.T, env *testenv.Env) {
		rows, err := env.SQL.DB().Query(`SELECT kid, public_jwk, private_key FROM signing_keys`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var kid, pub, priv string
			if err := rows.Scan(&kid, &pub, &priv); err != nil {
				t.Fatal(err)
			}
			n++
			if strings.Contains(pub, `"d"`) {
				t.Errorf("key %s: public_jwk holds a private member", kid)
			}
			if strings.Contains(priv, "PRIVATE KEY") {
				t.Errorf("key %s: PEM private key in clear", kid)
			}
			for _, b := range [][]byte{[]byte(priv), decode(priv)} {
				if _, err := x509.ParsePKCS8PrivateKey(b); err == nil {
					t.Errorf("key %s: private key stored in clear", kid)
				}
			}
		}
		if n != 2 {
			t.Errorf("%d keys; want 2", n)
		}
		rows.Close()
		// The ES256 key's sealed private key copied onto the RS256 row
		// does not open there (it is bound to its kid): the ring refuses
		// to load rather than sign with it.
		if _, err := env.SQL.DB().Exec(`UPDATE signing_keys SET private_key = (SELECT private_key FROM signing_keys WHERE alg = 'ES256')
			WHERE alg = 'RS256'`); err != nil {
			t.Fatal(err)
		}
		if _, err := app.OpenKeys(context.Background(), app.Config{}, env.SQL, nil); err == nil {
			t.Error("a ring opened with a private key moved to another kid")
		}
	})
}

func decode(s string) []byte {
	b, _ := base64.StdEncoding.DecodeString(s)
	return b
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 5 s", what)
}

// TestRotateDue is the rotation schedule's rule: a signing key is replaced
// once it is 90 days old, not before, and the new key is not due again;
// another instance publishes the new key without a restart and signs with
// it once keys.Ahead has passed.
func TestRotateDue(t *testing.T) {
	each(t, func(t *testing.T, env *testenv.Env) {
		other := env.Another(t) // its own clock
		ctx := context.Background()
		_, set := jwks(t, env)
		first := kids(set)
		env.Clock.Advance(89 * 24 * time.Hour)
		if rotated, err := env.Keys.RotateDue(ctx); err != nil || len(rotated) != 0 {
			t.Fatalf("at 89 days RotateDue rotated %v (%v); want nothing", rotated, err)
		}
		env.Clock.Advance(24*time.Hour + time.Second)
		rotated, err := env.Keys.RotateDue(ctx)
		if err != nil || len(rotated) != 2 {
			t.Fatalf("at 90 days RotateDue rotated %v (%v); want both algorithms", rotated, err)
		}
		if again, err := env.Keys.RotateDue(ctx); err != nil || len(again) != 0 {
			t.Errorf("RotateDue again rotated %v (%v); want nothing", again, err)
		}
		_, set = jwks(t, env)
		if len(set.Keys) != 4 {
			t.Errorf("%d keys published after the rotation; want 4", len(set.Keys))
		}
		waitFor(t, "the other instance publishes the new keys", func() bool {
			_, set := jwks(t, other)
			return len(set.Keys) == 4
		})
		for _, alg := range keys.Algs {
			if first[verify(t, other, set, alg)] == "" {
				t.Errorf("the other instance signs with the new %s key before keys.Ahead", alg)
			}
		}
		env.Clock.Advance(keys.Ahead)
		for _, alg := range keys.Algs {
			if first[verify(t, other, set, alg)] != "" {
				t.Errorf("the other instance still signs with the old %s key at keys.Ahead", alg)
			}
		}
	})
}

// TestRotationAhead: a rotated-in key is published at once and signs
// keys.Ahead later, on every instance at that instant; a second rotation
// within that time queues behind the first (each signs in its turn); no
// key signs before every instance could have read it.
func TestRotationAhead(t *testing.T) {
	each(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		other := env.Another(t)
		_, set := jwks(t, env)
		old := verify(t, env, set, keys.RS256)
		first, err := env.Keys.Rotate(ctx, keys.RS256, keys.Ahead)
		if err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(30 * time.Second)
		second, err := env.Keys.Rotate(ctx, keys.RS256, keys.Ahead)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Keys.Load(ctx); err != nil {
			t.Fatal(err)
		}
		for _, at := range []struct {
			advance time.Duration
			want    string
		}{
			{0, old},
			{keys.Ahead - 30*time.Second - time.Second, old},
			{time.Second, first},
			{30*time.Second - time.Second, first},
			{time.Second, second},
		} {
			env.Clock.Advance(at.advance)
			for i, in := range []*testenv.Env{env, other} {
				_, set := jwks(t, in)
				if len(set.Keys) != 4 { // the three RS256 keys and ES256
					t.Fatalf("instance %d publishes %d keys; want 4", i, len(set.Keys))
				}
				if got := verify(t, in, set, keys.RS256); got != at.want {
					t.Errorf("instance %d signs with %s; want %s", i, got, at.want)
				}
			}
		}
	})
}
