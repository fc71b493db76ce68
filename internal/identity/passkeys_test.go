package identity_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// The test env's web URL (GATEHOUSE_WEB_URL) is http://web.test: the
// relying party id is its host and the one allowed origin itself.
const (
	webOrigin = "http://web.test"
	webRPID   = "web.test"
)

// passkeyBegin calls a begin endpoint and decodes its options.
func passkeyBegin(t *testing.T, env *testenv.Env, path, bearer string) *passkeytest.Options {
	t.Helper()
	r := env.Call(t, "POST", path, bearer, nil).Want(t, 200)
	var o passkeytest.Options
	if err := json.Unmarshal(r.Body, &o); err != nil || o.CeremonyID == "" || o.Challenge() == "" {
		t.Fatalf("begin answered %s; want a ceremony id and a challenge (%v)", r.Body, err)
	}
	return &o
}

// finishBody is a finish step's body.
func finishBody(o *passkeytest.Options, cred json.RawMessage) map[string]any {
	return map[string]any{"ceremony_id": o.CeremonyID, "credential": cred}
}

// addPasskey registers a new passkey of auth on a's account and returns
// the credential and the passkey's id.
func addPasskey(t *testing.T, env *testenv.Env, a *testenv.Account, auth *passkeytest.Authenticator) (*passkeytest.Credential, string) {
	t.Helper()
	o := passkeyBegin(t, env, "/v1/me/passkeys/begin", a.Access)
	c, att, err := auth.Create(o)
	if err != nil {
		t.Fatal(err)
	}
	r := env.Call(t, "POST", "/v1/me/passkeys/finish", a.Access, finishBody(o, att)).Want(t, 201)
	return c, r.Str("id")
}

// passkeySignIn runs a usernameless sign-in with c and returns the answer.
func passkeySignIn(t *testing.T, env *testenv.Env, auth *passkeytest.Authenticator, c *passkeytest.Credential) *testenv.Resp {
	t.Helper()
	o := passkeyBegin(t, env, "/v1/auth/passkey/begin", "")
	return env.Call(t, "POST", "/v1/auth/passkey/finish", "", finishBody(o, auth.Assert(c, o.Challenge())))
}

// passkeys lists a's passkeys.
func passkeys(t *testing.T, env *testenv.Env, a *testenv.Account) []map[string]any {
	t.Helper()
	return env.Call(t, "GET", "/v1/me/passkeys", a.Access, nil).Want(t, 200).List(t, "passkeys")
}

// TestPasskeyLifecycle: register (options ask for a discoverable
// credential of this RP), list, rename, sign in without an address (a
// session like login's, via passkey), remove; a removed passkey signs in
// no more.
func TestPasskeyLifecycle(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		o := passkeyBegin(t, env, "/v1/me/passkeys/begin", a.Access)
		var opts struct {
			PublicKey struct {
				RP struct {
					ID string `json:"id"`
				} `json:"rp"`
				AuthenticatorSelection struct {
					ResidentKey string `json:"residentKey"`
				} `json:"authenticatorSelection"`
			} `json:"publicKey"`
		}
		raw := env.Call(t, "POST", "/v1/me/passkeys/begin", a.Access, nil).Want(t, 200).Body
		json.Unmarshal(raw, &opts)
		if opts.PublicKey.RP.ID != webRPID || opts.PublicKey.AuthenticatorSelection.ResidentKey != "required" {
			t.Fatalf("registration options %s; want RP id %s and a discoverable credential required", raw, webRPID)
		}
		signIn := env.Call(t, "POST", "/v1/auth/passkey/begin", "", nil).Want(t, 200)
		if allow, ok := signIn.Get("publicKey.allowCredentials").([]any); signIn.Str("publicKey.rpId") != webRPID || (ok && len(allow) > 0) {
			t.Fatalf("sign-in options %s; want RP id %s and no allowCredentials", signIn.Body, webRPID)
		}
		auth := passkeytest.New(webOrigin, webRPID)
		c, att, err := auth.Create(o)
		if err != nil {
			t.Fatal(err)
		}
		body := finishBody(o, att)
		body["name"] = "  Laptop  "
		r := env.Call(t, "POST", "/v1/me/passkeys/finish", a.Access, body).Want(t, 201)
		id := r.Str("id")
		if r.Str("name") != "Laptop" || !testenv.IsUUID(id) || r.Get("last_used_at") != nil {
			t.Fatalf("created %s; want name Laptop, an id, no last use", r.Body)
		}
		list := passkeys(t, env, a)
		if len(list) != 1 || list[0]["id"] != id {
			t.Fatalf("listed %v; want the one passkey %s", list, id)
		}
		env.Call(t, "PATCH", "/v1/me/passkeys/"+id, a.Access, map[string]string{"name": "Phone"}).Want(t, 200)

		s := passkeySignIn(t, env, auth, c).Want(t, 200)
		if s.Str("user.id") != a.UserID || s.Str("refresh_token") == "" {
			t.Fatalf("sign-in answered %s; want a session of %s", s.Body, a.UserID)
		}
		if via := testenv.Claims(t, s.Str("access_token"))["via"]; via != "passkey" {
			t.Fatalf("via = %v; want passkey", via)
		}
		env.Call(t, "GET", "/v1/auth/me", s.Str("access_token"), nil).Want(t, 200)
		env.Refresh(t, s.Str("refresh_token")).Want(t, 200)
		list = passkeys(t, env, a)
		if list[0]["name"] != "Phone" || list[0]["last_used_at"] == nil {
			t.Fatalf("after rename and sign-in: %v; want name Phone and a last use", list[0])
		}

		b := env.Register(t)
		env.RunCases(t, []testenv.Case{
			{Name: "another account cannot rename it", Method: "PATCH", Path: "/v1/me/passkeys/" + id, Token: b.Access, Body: map[string]string{"name": "x"}, Want: 404},
			{Name: "another account cannot remove it", Method: "DELETE", Path: "/v1/me/passkeys/" + id, Token: b.Access, Want: 404},
			{Name: "empty name", Method: "PATCH", Path: "/v1/me/passkeys/" + id, Token: a.Access, Body: map[string]string{"name": " "}, Want: 400},
			{Name: "name with a control character", Method: "PATCH", Path: "/v1/me/passkeys/" + id, Token: a.Access, Body: map[string]string{"name": "a\x01"}, Want: 400},
			{Name: "not an id", Method: "DELETE", Path: "/v1/me/passkeys/nope", Token: a.Access, Want: 404},
			{Name: "remove", Method: "DELETE", Path: "/v1/me/passkeys/" + id, Token: a.Access, Want: 200},
			{Name: "removed twice", Method: "DELETE", Path: "/v1/me/passkeys/" + id, Token: a.Access, Want: 404},
		})
		if list := passkeys(t, env, a); len(list) != 0 {
			t.Fatalf("after removal: %v; want none", list)
		}
		passkeySignIn(t, env, auth, c).Want(t, 401)
		audit := env.StoredAudit(t, a.OrgID, "identity.user.passkey_added")
		if len(audit) != 1 || len(env.StoredAudit(t, a.OrgID, "identity.user.passkey_removed")) != 1 {
			t.Fatalf("audit: %d added, want 1 added and 1 removed", len(audit))
		}
	})
}

// TestPasskeyRegisterBadInput: each bad finish is a 400 (or 409 for a
// credential registered already) and stores nothing.
func TestPasskeyRegisterBadInput(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		taken, _ := addPasskey(t, env, a, auth)
		const path = "/v1/me/passkeys/finish"
		// attest returns a fresh ceremony of acct answered by an
		// authenticator at origin and rpID (nil credential: a new one).
		attest := func(acct *testenv.Account, origin, rpID string, c *passkeytest.Credential) map[string]any {
			o := passkeyBegin(t, env, "/v1/me/passkeys/begin", acct.Access)
			au := passkeytest.New(origin, rpID)
			if c != nil {
				return finishBody(o, au.Attest(c, o.Challenge()))
			}
			_, att, err := au.Create(o)
			if err != nil {
				t.Fatal(err)
			}
			return finishBody(o, att)
		}
		used := attest(a, webOrigin, webRPID, nil)
		env.Call(t, "POST", path, a.Access, used).Want(t, 201)
		expired := attest(a, webOrigin, webRPID, nil)
		ofB := attest(b, webOrigin, webRPID, nil)
		env.RunCases(t, []testenv.Case{
			{Name: "malformed JSON", Method: "POST", Path: path, Token: a.Access, Body: `{"ceremony_id": `, Want: 400},
			{Name: "no credential", Method: "POST", Path: path, Token: a.Access, Body: map[string]any{"ceremony_id": "x"}, Want: 400},
			{Name: "no ceremony", Method: "POST", Path: path, Token: a.Access, Body: map[string]any{"credential": map[string]any{}}, Want: 400},
			{Name: "credential not a WebAuthn response", Method: "POST", Path: path, Token: a.Access,
				Body: map[string]any{"ceremony_id": "x", "credential": map[string]any{"id": "AAAA", "type": "public-key"}}, Want: 400},
			{Name: "unknown ceremony", Method: "POST", Path: path, Token: a.Access, Body: map[string]any{"ceremony_id": "nope", "credential": used["credential"]}, Want: 400},
			{Name: "reused challenge", Method: "POST", Path: path, Token: a.Access, Body: used, Want: 400},
			{Name: "another origin", Method: "POST", Path: path, Token: a.Access, Body: attest(a, "https://evil.test", webRPID, nil), Want: 400},
			{Name: "another RP id", Method: "POST", Path: path, Token: a.Access, Body: attest(a, webOrigin, "evil.test", nil), Want: 400},
			{Name: "a ceremony another account began", Method: "POST", Path: path, Token: a.Access, Body: ofB, Want: 400},
			{Name: "a credential registered to another account", Method: "POST", Path: path, Token: b.Access, Body: attest(b, webOrigin, webRPID, taken), Want: 409},
			{Name: "a credential registered to this account", Method: "POST", Path: path, Token: a.Access, Body: attest(a, webOrigin, webRPID, taken), Want: 409},
			{Name: "a sign-in ceremony", Method: "POST", Path: path, Token: a.Access,
				Body: finishBody(passkeyBegin(t, env, "/v1/auth/passkey/begin", ""), used["credential"].(json.RawMessage)), Want: 400},
			{Name: "expired challenge", Method: "POST", Path: path, Token: a.Access, Body: expired, Want: 400,
				Before: func(t *testing.T) { env.Clock.Advance(identity.CeremonyTTL + time.Second) }},
		})
		if n := len(passkeys(t, env, a)); n != 2 {
			t.Fatalf("a has %d passkeys; want the 2 registered well", n)
		}
		if n := len(passkeys(t, env, b)); n != 0 {
			t.Fatalf("b has %d passkeys; want 0", n)
		}
	})
}

// TestPasskeySignInBadInput: each bad sign-in is a 400 or 401 that opens
// no session and leaves the passkey's count and last use as they were.
func TestPasskeySignInBadInput(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		c, _ := addPasskey(t, env, a, auth)
		other, _ := addPasskey(t, env, b, auth)
		const path = "/v1/auth/passkey/finish"
		begin := func() *passkeytest.Options { return passkeyBegin(t, env, "/v1/auth/passkey/begin", "") }
		as := func(origin, rpID string) map[string]any {
			o := begin()
			return finishBody(o, passkeytest.New(origin, rpID).Assert(c, o.Challenge()))
		}
		o := begin()
		used := finishBody(o, auth.Assert(c, o.Challenge()))
		env.Call(t, "POST", path, "", used).Want(t, 200)
		sessions := len(env.Call(t, "GET", "/v1/me/sessions", a.Access, nil).Want(t, 200).List(t, "sessions"))
		before := passkeys(t, env, a)[0]["last_used_at"]

		stranger := &passkeytest.Credential{ID: []byte("never-registered"), UserHandle: []byte(a.UserID), Key: c.Key}
		forged := *c
		forged.UserHandle = []byte(b.UserID)
		expired := begin()
		reg := passkeyBegin(t, env, "/v1/me/passkeys/begin", a.Access)
		sign := func(o *passkeytest.Options, cred *passkeytest.Credential) map[string]any {
			return finishBody(o, auth.Assert(cred, o.Challenge()))
		}
		o2 := begin()
		env.RunCases(t, []testenv.Case{
			{Name: "malformed JSON", Method: "POST", Path: path, Body: `{"ceremony_id"`, Want: 400},
			{Name: "credential not a WebAuthn response", Method: "POST", Path: path, Body: map[string]any{"ceremony_id": "x", "credential": map[string]any{"id": 1}}, Want: 400},
			{Name: "credential a string", Method: "POST", Path: path, Body: map[string]any{"ceremony_id": "x", "credential": "abc"}, Want: 400},
			{Name: "reused challenge", Method: "POST", Path: path, Body: used, Want: 400},
			{Name: "foreign credential", Method: "POST", Path: path, Body: sign(begin(), stranger), Want: 401},
			{Name: "signed by another key", Method: "POST", Path: path, Body: finishBody(o2, auth.AssertWith(c, other.Key, o2.Challenge())), Want: 401},
			{Name: "user handle of another account", Method: "POST", Path: path, Body: sign(begin(), &forged), Want: 401},
			{Name: "another origin", Method: "POST", Path: path, Body: as("https://evil.test", webRPID), Want: 401},
			{Name: "another RP id", Method: "POST", Path: path, Body: as(webOrigin, "evil.test"), Want: 401},
			{Name: "a registration ceremony", Method: "POST", Path: path, Body: sign(reg, c), Want: 400},
			{Name: "expired challenge", Method: "POST", Path: path, Body: sign(expired, c), Want: 400,
				Before: func(t *testing.T) { env.Clock.Advance(identity.CeremonyTTL + time.Second) }},
		})
		t.Run("a ceremony with a refused answer is used up", func(t *testing.T) {
			o := begin()
			env.Call(t, "POST", path, "", finishBody(o, auth.AssertWith(c, other.Key, o.Challenge()))).Want(t, 401)
			env.Call(t, "POST", path, "", finishBody(o, auth.Assert(c, o.Challenge()))).Want(t, 400)
		})
		if n := len(env.Call(t, "GET", "/v1/me/sessions", a.Access, nil).Want(t, 200).List(t, "sessions")); n != sessions {
			t.Fatalf("%d sessions after the refused sign-ins; want %d", n, sessions)
		}
		if got := passkeys(t, env, a)[0]["last_used_at"]; got != before {
			t.Fatalf("last use %v after refused sign-ins; want %v", got, before)
		}
	})
}

// TestPasskeySignCount: 0 is accepted again and again (synced passkeys);
// once non-zero, a count that does not increase is refused (a cloned
// authenticator) and a higher one accepted.
func TestPasskeySignCount(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		auth.Flags |= passkeytest.FlagBE | passkeytest.FlagBS
		c, _ := addPasskey(t, env, a, auth)
		for _, step := range []struct {
			count uint32
			want  int
		}{{0, 200}, {0, 200}, {5, 200}, {5, 401}, {3, 401}, {0, 401}, {6, 200}} {
			c.Count = step.count
			if r := passkeySignIn(t, env, auth, c); r.Status != step.want {
				t.Fatalf("count %d: status = %d, body %s; want %d", step.count, r.Status, r.Body, step.want)
			}
		}
		if pk := passkeys(t, env, a)[0]; pk["backup_eligible"] != true || pk["backed_up"] != true {
			t.Fatalf("passkey %v; want a synced passkey", pk)
		}
	})
}

// TestPasskeyAcrossInstances: a ceremony begun on one instance finishes
// on another of the same database, for registration and sign-in, and is
// used up for both.
func TestPasskeyAcrossInstances(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			one := testenv.New(t, db, testenv.Options{})
			two := testenv.New(t, db, testenv.Options{DB: one.SQL})
			a := one.Register(t)
			auth := passkeytest.New(webOrigin, webRPID)
			o := passkeyBegin(t, one, "/v1/me/passkeys/begin", a.Access)
			c, att, err := auth.Create(o)
			if err != nil {
				t.Fatal(err)
			}
			// Each instance is its own issuer: the account signs in on both.
			onTwo := two.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")
			two.Call(t, "POST", "/v1/me/passkeys/finish", onTwo, finishBody(o, att)).Want(t, 201)
			// Adding a passkey ended the account's other sessions, a.Access's
			// among them: a fresh one on the first instance meets the used
			// ceremony.
			onOne := one.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")
			one.Call(t, "POST", "/v1/me/passkeys/finish", onOne, finishBody(o, att)).Want(t, 400)
			o = passkeyBegin(t, two, "/v1/auth/passkey/begin", "")
			body := finishBody(o, auth.Assert(c, o.Challenge()))
			if r := one.Call(t, "POST", "/v1/auth/passkey/finish", "", body).Want(t, 200); r.Str("user.id") != a.UserID {
				t.Fatalf("signed in %s; want %s", r.Str("user.id"), a.UserID)
			}
			two.Call(t, "POST", "/v1/auth/passkey/finish", "", body).Want(t, 400)
		})
	}
}

// TestPasskeyRateLimit: usernameless sign-in is limited per IP (begin and
// finish share one bucket).
func TestPasskeyRateLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		for i := 1; i <= identity.LimitPasskey.Burst; i++ {
			env.Call(t, "POST", "/v1/auth/passkey/begin", "", nil).Want(t, 200)
		}
		env.RunCases(t, []testenv.Case{
			{Name: "begin beyond the burst", Method: "POST", Path: "/v1/auth/passkey/begin", Want: 429, Check: testenv.WantRetryAfter},
			{Name: "finish shares the bucket", Method: "POST", Path: "/v1/auth/passkey/finish", Body: map[string]any{}, Want: 429, Check: testenv.WantRetryAfter},
		})
	})
}

// sameCountFinishes registers an account with a passkey and returns n
// finish bodies of usernameless sign-ins, each of its own ceremony, all
// asserting sign count 7.
func sameCountFinishes(t *testing.T, env *testenv.Env, n int) (*passkeytest.Authenticator, *passkeytest.Credential, []map[string]any) {
	t.Helper()
	a := env.Register(t)
	auth := passkeytest.New(webOrigin, webRPID)
	c, _ := addPasskey(t, env, a, auth)
	c.Count = 7
	bodies := make([]map[string]any, n)
	for i := range bodies {
		o := passkeyBegin(t, env, "/v1/auth/passkey/begin", "")
		bodies[i] = finishBody(o, auth.Assert(c, o.Challenge()))
	}
	return auth, c, bodies
}

// TestPasskeyConcurrentCount: assertions carrying one sign count, each
// with its own ceremony and all checked against the same stored count,
// race to sign in: exactly one counts (the conditional update), the rest
// are 401. A ceremony finished by many at once is used once.
func TestPasskeyConcurrentCount(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		const n = 10
		auth, c, bodies := sameCountFinishes(t, env, n)
		rs := testenv.AtOnceAnswers(n, func(i int) *testenv.Resp {
			return env.Do(t, "POST", "/v1/auth/passkey/finish", "", bodies[i])
		})
		if got := countStatus(rs); got[200] != 1 || got[401] != n-1 {
			t.Fatalf("statuses %v of %d sign-ins with one count; want one 200, the rest 401", got, n)
		}
		c.Count = 8
		o := passkeyBegin(t, env, "/v1/auth/passkey/begin", "")
		body := finishBody(o, auth.Assert(c, o.Challenge()))
		rs = testenv.AtOnceAnswers(n, func(int) *testenv.Resp { return env.Do(t, "POST", "/v1/auth/passkey/finish", "", body) })
		// A loser that reads the ceremony after the winner committed meets
		// the count already at 8 (401), one that reads it before finds it
		// taken (400): either way it signs nobody in.
		if got := countStatus(rs); got[200] != 1 || got[400]+got[401] != n-1 {
			t.Fatalf("statuses %v of %d finishes of one ceremony; want one 200, the rest 400 or 401", got, n)
		}
	})
}

// TestPasskeyCountRaceAtTheWriter: finishes with one sign count, each
// checked against the stored count before any of them writes (the finish
// reads, checks and mints before its write transaction; here, on SQLite,
// the writer is held until all have checked): the conditional update in
// the transaction, not the check before it, lets exactly one count.
func TestPasskeyCountRaceAtTheWriter(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		const n = 6
		_, _, bodies := sameCountFinishes(t, env, n)
		held, txDone := make(chan struct{}), make(chan error, 1)
		go func() {
			txDone <- env.Store.Tx(t.Context(), func(identity.Store) error {
				close(held)
				time.Sleep(2 * time.Second) // the finishes check meanwhile
				return nil
			})
		}()
		<-held
		rs := testenv.AtOnceAnswers(n, func(i int) *testenv.Resp {
			return env.Do(t, "POST", "/v1/auth/passkey/finish", "", bodies[i])
		})
		if err := <-txDone; err != nil {
			t.Fatal(err)
		}
		if got := countStatus(rs); got[200] != 1 || got[401] != n-1 {
			t.Fatalf("statuses %v of %d sign-ins with one count checked before any wrote; want one 200, the rest 401", got, n)
		}
	})
}

// TestVerifyPasskey is the second-factor seam: a check begun for an
// account accepts that account's passkey once, and refuses another
// account's passkey, a usernameless ceremony and a ceremony begun for
// someone else; an account with no passkey cannot begin one.
func TestVerifyPasskey(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		ctx := t.Context()
		a, b, none := env.Register(t), env.Register(t), env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		ca, _ := addPasskey(t, env, a, auth)
		cb, _ := addPasskey(t, env, b, auth)
		begin := func(userID string) *passkeytest.Options {
			t.Helper()
			o, err := env.Svc.BeginPasskeyCheck(ctx, userID)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(identity.ToPasskeyOptions(o))
			var out passkeytest.Options
			json.Unmarshal(raw, &out)
			return &out
		}
		if _, err := env.Svc.BeginPasskeyCheck(ctx, none.UserID); gatehouse.ErrorKind(err) != gatehouse.KindInvalid {
			t.Fatalf("begin for an account without passkeys: %v; want a 400", err)
		}
		o := begin(a.UserID)
		if pk, err := env.Svc.VerifyPasskey(ctx, a.UserID, o.CeremonyID, auth.Assert(ca, o.Challenge())); err != nil || pk.UserID != a.UserID {
			t.Fatalf("a's passkey for a: %v, %v; want accepted", pk, err)
		}
		if _, err := env.Svc.VerifyPasskey(ctx, a.UserID, o.CeremonyID, auth.Assert(ca, o.Challenge())); gatehouse.ErrorKind(err) != gatehouse.KindInvalid {
			t.Fatalf("the same ceremony again: %v; want a 400", err)
		}
		for _, tc := range []struct {
			name        string
			ceremonyFor string // "" : a usernameless ceremony
			verifyAs    string
			cred        *passkeytest.Credential
			want        gatehouse.Kind
		}{
			{"another account's passkey", a.UserID, a.UserID, cb, gatehouse.KindUnauthorized},
			{"a ceremony begun for another account", b.UserID, a.UserID, ca, gatehouse.KindInvalid},
			{"a usernameless ceremony", "", a.UserID, ca, gatehouse.KindInvalid},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var o *passkeytest.Options
				if tc.ceremonyFor == "" {
					o = passkeyBegin(t, env, "/v1/auth/passkey/begin", "")
				} else {
					o = begin(tc.ceremonyFor)
				}
				if _, err := env.Svc.VerifyPasskey(ctx, tc.verifyAs, o.CeremonyID, auth.Assert(tc.cred, o.Challenge())); gatehouse.ErrorKind(err) != tc.want {
					t.Fatalf("VerifyPasskey: %v; want kind %v", err, tc.want)
				}
			})
		}
	})
}

// TestPasskeyLimits: at most MaxPasskeys per account (409 on begin beyond)
// and names of at most MaxPasskeyName characters (400, nothing stored).
func TestPasskeyLimits(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		o := passkeyBegin(t, env, "/v1/me/passkeys/begin", a.Access)
		_, att, err := auth.Create(o)
		if err != nil {
			t.Fatal(err)
		}
		long := finishBody(o, att)
		long["name"] = strings.Repeat("é", identity.MaxPasskeyName+1)
		env.Call(t, "POST", "/v1/me/passkeys/finish", a.Access, long).Want(t, 400)
		for range identity.MaxPasskeys {
			addPasskey(t, env, a, auth)
		}
		env.Call(t, "POST", "/v1/me/passkeys/begin", a.Access, nil).Want(t, 409)
		if n := len(passkeys(t, env, a)); n != identity.MaxPasskeys {
			t.Fatalf("%d passkeys; want %d", n, identity.MaxPasskeys)
		}
	})
}

// TestPasskeyAccountDeleted: deleting the account deletes its passkeys
// (and ceremonies begun for it); a sign-in begun before with its passkey
// then finishes as 401, not 500.
func TestPasskeyAccountDeleted(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		c, _ := addPasskey(t, env, a, auth)
		o := passkeyBegin(t, env, "/v1/auth/passkey/begin", "")
		env.Call(t, "DELETE", "/v1/me", a.Access, nil).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/passkey/finish", "", finishBody(o, auth.Assert(c, o.Challenge()))).Want(t, 401)
		var n int
		env.SQL.DB().QueryRow(`SELECT COUNT(*) FROM passkeys WHERE user_id = $1`, a.UserID).Scan(&n)
		if n != 0 {
			t.Fatalf("%d passkeys left of a deleted account; want 0", n)
		}
	})
}

// TestPasskeyAccountDisabled: an operator's `users disable` refuses the
// account's passkey sign-in, begun before it or after, with the answer
// that names a disabled account and no session; enabled again, the same
// passkey signs in.
func TestPasskeyAccountDisabled(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		c, _ := addPasskey(t, env, a, auth)
		begun := passkeyBegin(t, env, "/v1/auth/passkey/begin", "")
		if _, err := env.Svc.DisableAccount(context.Background(), a.Email); err != nil {
			t.Fatal(err)
		}
		r := env.Call(t, "POST", "/v1/auth/passkey/finish", "", finishBody(begun, auth.Assert(c, begun.Challenge()))).Want(t, 401)
		if !strings.Contains(r.Str("error"), "disabled") {
			t.Errorf("passkey sign-in of a disabled account: %s; want it named disabled", r.Body)
		}
		passkeySignIn(t, env, auth, c).Want(t, 401)
		var n int
		env.SQL.DB().QueryRow(`SELECT COUNT(*) FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, a.UserID).Scan(&n)
		if n != 0 {
			t.Fatalf("%d live sessions of the disabled account; want 0", n)
		}
		if _, err := env.Svc.EnableAccount(context.Background(), a.Email); err != nil {
			t.Fatal(err)
		}
		passkeySignIn(t, env, auth, c).Want(t, 200)
	})
}
