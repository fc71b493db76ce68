package keys_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// kidOf returns the kid in the header of jws.
func kidOf(t *testing.T, jws string) string {
	t.Helper()
	head, _, _ := strings.Cut(jws, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Kid string }
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h.Kid
}

// hsJWS returns payload under header (raw JSON) with the HMAC-SHA256 of key.
func hsJWS(header string, key []byte, payload []byte) string {
	s := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString(payload)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return s + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// payloadOf returns the payload of jws, unverified.
func payloadOf(t *testing.T, jws string) []byte {
	t.Helper()
	parts := strings.Split(jws, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHS256RotationAcrossInstances: three instances on one database whose
// rings reload only once an hour. Before any rotation the configured
// secret signs, its kid (derived from it) in the header, and a token of
// before kids verifies. `keys rotate --hs256` on one instance: until
// keys.Ahead has passed every instance, the rotating one too, still signs
// with the secret; then all three sign with the new key at once (the
// instant is the database's, not each reload's); what the secret signed
// keeps verifying on all three. A rotation with no time ahead (a leaked
// key) signs at once on its instance, and its tokens verify on one that has
// not reloaded (an unknown kid reloads the ring). The secret's tokens stop
// verifying Keep after its retirement.
func TestHS256RotationAcrossInstances(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			a := testenv.New(t, db, testenv.Options{DB: fresh(t, db), KeysReload: time.Hour})
			b, c := a.Another(t), a.Another(t)
			envs := []*testenv.Env{a, b, c}
			acc := a.Register(t)
			secretKID := keys.SecretKID([]byte(testenv.JWTSecret))
			if got := kidOf(t, acc.Access); got != secretKID {
				t.Fatalf("kid of a token before rotation = %q; want the secret's %q", got, secretKID)
			}
			legacy := hsJWS(`{"alg":"HS256","typ":"JWT"}`, []byte(testenv.JWTSecret), payloadOf(t, acc.Access))
			before := acc.Access
			kid, err := a.Keys.Rotate(ctx, keys.HS256, keys.Ahead)
			if err != nil {
				t.Fatal(err)
			}
			if kid == secretKID || kid == "" {
				t.Fatalf("rotated kid %q", kid)
			}
			login := func(env *testenv.Env) string {
				return env.Login(t, acc.Email, acc.Password).Want(t, 200).Str("access_token")
			}
			for i, env := range envs {
				if got := kidOf(t, login(env)); got != secretKID {
					t.Fatalf("instance %d signs with kid %q before keys.Ahead; want the secret's", i, got)
				}
			}
			// Every instance reads the ring within keys.Reload, less than
			// keys.Ahead: the new key signs everywhere at the same instant.
			for _, env := range envs[1:] {
				if err := env.Keys.Load(ctx); err != nil {
					t.Fatal(err)
				}
			}
			a.Clock.Advance(keys.Ahead - time.Second)
			if got := kidOf(t, login(b)); got != secretKID {
				t.Fatalf("a second before keys.Ahead an instance signs with kid %q; want the secret's", got)
			}
			a.Clock.Advance(time.Second)
			var after string
			for i, env := range envs {
				after = login(env)
				if got := kidOf(t, after); got != kid {
					t.Fatalf("instance %d at keys.Ahead signs with kid %q; want the new %q", i, got, kid)
				}
			}
			for i, env := range envs {
				for name, tok := range map[string]string{"before": before, "without kid": legacy, "after": after} {
					if r := env.Do(t, "GET", "/v1/auth/verify", tok, nil); r.Status != 200 {
						t.Errorf("instance %d: the token %s the rotation answers %d; want 200", i, name, r.Status)
					}
				}
			}
			// A leaked key is replaced at once: the new key signs on the
			// rotating instance now, and c, which has not reloaded, verifies
			// it by reading the ring on the unknown kid.
			now, err := a.Keys.Rotate(ctx, keys.HS256, 0)
			if err != nil {
				t.Fatal(err)
			}
			leakedAfter := login(a)
			if got := kidOf(t, leakedAfter); got != now {
				t.Fatalf("after a rotation with no time ahead the instance signs with kid %q; want %q", got, now)
			}
			if r := c.Do(t, "GET", "/v1/auth/verify", leakedAfter, nil); r.Status != 200 {
				t.Errorf("an instance that has not reloaded refuses the new key's token: %d", r.Status)
			}
			if _, err := a.Keys.Rotate(ctx, keys.HS256, -time.Second); err == nil {
				t.Error("a rotation signing before it is published was accepted")
			}
			// Past Keep the secret verifies nowhere (every instance has
			// reloaded by then); the new key still does.
			signed, err := a.Signer.Sign(ctx, keys.HS256, []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			old := hsJWS(`{"alg":"HS256","kid":"`+secretKID+`","typ":"JWT"}`, []byte(testenv.JWTSecret), []byte(`{}`))
			a.Clock.Advance(keys.Keep + time.Second)
			for i, env := range envs {
				if err := env.Keys.Load(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := env.Signer.Verify(ctx, keys.HS256, old); err == nil {
					t.Errorf("instance %d: the retired secret verifies past Keep", i)
				}
				if _, err := env.Signer.Verify(ctx, keys.HS256, legacy); err == nil {
					t.Errorf("instance %d: a token without kid verifies past Keep", i)
				}
				if _, err := env.Signer.Verify(ctx, keys.HS256, signed); err != nil {
					t.Errorf("instance %d: the ring's HS256 key refused: %v", i, err)
				}
			}
		})
	}
}

// countingStore counts the ring's reads of the real store.
type countingStore struct {
	keys.Store
	loads atomic.Int32
}

func (s *countingStore) SigningKeys(ctx context.Context, now time.Time) ([]keys.Record, error) {
	s.loads.Add(1)
	return s.Store.SigningKeys(ctx, now)
}

// TestAccessTokenForgery: the access tokens' signer refuses a token whose
// kid it does not know (forged, after one reload; more forged kids within
// MissReload read nothing), alg none, an RS256 JWS, an HS256 MAC keyed
// with the RS256 public key under its kid (algorithm confusion), and a MAC
// under another secret naming the configured secret's kid; it never
// signs but HS256, and the ring itself never signs or verifies HS256.
func TestAccessTokenForgery(t *testing.T) {
	each(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		master, err := env.SQL.Identity().SettingOrCreate(ctx, "encryption_key", "unused")
		if err != nil {
			t.Fatal(err)
		}
		secret, err := keys.NewSecret([]byte(testenv.JWTSecret))
		if err != nil {
			t.Fatal(err)
		}
		store := &countingStore{Store: env.SQL.Keys()}
		ring, err := keys.Open(ctx, keys.Config{Store: store, Master: []byte(master), Secret: secret, Now: env.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		s := ring.Access()
		payload := []byte(`{"sub":"x"}`)
		good, err := s.Sign(ctx, keys.HS256, payload)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Verify(ctx, keys.HS256, good); err != nil {
			t.Fatalf("its own token: %v", err)
		}
		rs, err := ring.Sign(ctx, keys.RS256, payload)
		if err != nil {
			t.Fatal(err)
		}
		rsKID := kidOf(t, rs)
		_, set := jwks(t, env)
		rsPub, err := json.Marshal(set.Key(rsKID)[0])
		if err != nil {
			t.Fatal(err)
		}
		key := []byte(testenv.JWTSecret)
		for name, jws := range map[string]string{
			"forged kid":                     hsJWS(`{"alg":"HS256","kid":"forged","typ":"JWT"}`, key, payload),
			"alg none":                       base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"`+secret.KID()+`"}`)) + "." + base64.RawURLEncoding.EncodeToString(payload) + ".",
			"RS256":                          rs,
			"RS256 key as HMAC":              hsJWS(`{"alg":"HS256","kid":"`+rsKID+`","typ":"JWT"}`, rsPub, payload),
			"another secret":                 hsJWS(`{"alg":"HS256","kid":"`+secret.KID()+`","typ":"JWT"}`, []byte(strings.Repeat("z", 32)), payload),
			"lower-case alg":                 hsJWS(`{"alg":"hs256","kid":"`+secret.KID()+`","typ":"JWT"}`, key, payload),
			"RS256 header, the secret's MAC": hsJWS(`{"alg":"RS256","kid":"`+secret.KID()+`","typ":"JWT"}`, key, payload),
			"none header, the secret's MAC":  hsJWS(`{"alg":"none","kid":"`+secret.KID()+`","typ":"JWT"}`, key, payload),
		} {
			if _, err := s.Verify(ctx, keys.HS256, jws); err == nil {
				t.Errorf("%s: verifies", name)
			}
		}
		if _, err := s.Sign(ctx, keys.RS256, payload); err == nil {
			t.Error("the access signer signs RS256")
		}
		if _, err := ring.Sign(ctx, keys.HS256, payload); err == nil {
			t.Error("the ring signs HS256 (ID and logout tokens could then pass as access tokens)")
		}
		if _, err := ring.Verify(ctx, keys.HS256, good); err == nil {
			t.Error("the ring verifies HS256")
		}

		// Unknown kids: one reload, then none until MissReload has passed
		// (the forged kid above made the first).
		env.Clock.Advance(keys.MissReload)
		loads := store.loads.Load()
		for i := 0; i < 5; i++ {
			s.Verify(ctx, keys.HS256, hsJWS(`{"alg":"HS256","kid":"forged`+testenv.RandomHex(3)+`"}`, key, payload))
		}
		if got := store.loads.Load() - loads; got != 1 {
			t.Errorf("5 unknown kids read the ring %d times; want 1", got)
		}
		env.Clock.Advance(keys.MissReload)
		s.Verify(ctx, keys.HS256, hsJWS(`{"alg":"HS256","kid":"forged"}`, key, payload))
		if got := store.loads.Load() - loads; got != 2 {
			t.Errorf("after MissReload the ring was read %d times; want 2", got)
		}
	})
}

// TestSecretRetiredOnlyByHS256: rotating RS256 or ES256 leaves the
// configured secret the HS256 key of record, verifying for ever; a
// retirement row an earlier build wrote at such a rotation (expired by now)
// is renewed by the first HS256 rotation, so the secret's tokens verify
// keys.Keep after that one, and the secret signs until the new key does.
func TestSecretRetiredOnlyByHS256(t *testing.T) {
	each(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		acc := env.Register(t)
		secretKID := keys.SecretKID([]byte(testenv.JWTSecret))
		if _, err := env.Keys.Rotate(ctx, keys.ES256, 0); err != nil {
			t.Fatal(err)
		}
		var rows int
		if err := env.SQL.DB().QueryRow(`SELECT count(*) FROM signing_keys WHERE kid = $1`, secretKID).Scan(&rows); err != nil || rows != 0 {
			t.Fatalf("an ES256 rotation wrote %d rows retiring the secret (%v); want none", rows, err)
		}
		// The row of an earlier build's ES256 rotation, a day and more ago.
		at := env.Clock.Now().Add(-keys.Keep - time.Hour)
		expires := at.Add(keys.Keep)
		if _, err := env.SQL.Keys().AddSigningKey(ctx, keys.Record{KID: secretKID, Alg: keys.HS256, CreatedAt: at, RetiredAt: &at, ExpiresAt: &expires}); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(keys.Keep + time.Second)
		if err := env.Keys.Load(ctx); err != nil {
			t.Fatal(err)
		}
		old := hsJWS(`{"alg":"HS256","kid":"`+secretKID+`","typ":"JWT"}`, []byte(testenv.JWTSecret), []byte(`{}`))
		verifies := func(when string) {
			t.Helper()
			if _, err := env.Signer.Verify(ctx, keys.HS256, old); err != nil {
				t.Errorf("%s: the secret's JWS refused: %v", when, err)
			}
		}
		verifies("after an ES256 rotation")
		kid, err := env.Keys.Rotate(ctx, keys.HS256, keys.Ahead)
		if err != nil {
			t.Fatal(err)
		}
		if got := kidOf(t, env.Login(t, acc.Email, acc.Password).Want(t, 200).Str("access_token")); got != secretKID {
			t.Errorf("before keys.Ahead the instance signs with %q; want the secret's %q", got, secretKID)
		}
		verifies("after the HS256 rotation")
		env.Clock.Advance(keys.Ahead + keys.Keep - time.Second)
		verifies("just before keys.Keep after the new key signs")
		if got := kidOf(t, env.Login(t, acc.Email, acc.Password).Want(t, 200).Str("access_token")); got != kid {
			t.Errorf("after keys.Ahead the instance signs with %q; want the new %q", got, kid)
		}
	})
}
