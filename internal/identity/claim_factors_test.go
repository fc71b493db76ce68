package identity_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// Pre-takeover through the second factors (issue 23 item 2): a registrant
// of someone else's address may also set up TOTP (with its recovery
// codes) and passkeys before the owner proves the mailbox. The claim
// removes them with the password, so the registrant keeps no way in and
// the owner is asked for no factor they do not have.

// claimByMagicLink proves a's mailbox with a magic link on env and
// returns the owner's session.
func claimByMagicLink(t *testing.T, env *testenv.Env, a *testenv.Account) *testenv.Resp {
	t.Helper()
	tok := env.MagicToken(t, a.Email)
	return env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200)
}

// claimMeta is the meta of the claim's audit entry in the owner's
// personal workspace.
func claimMeta(t *testing.T, env *testenv.Env, access, orgID string) map[string]any {
	t.Helper()
	for _, e := range env.Audit(t, access, orgID, "action=identity.user.email_verified") {
		var m map[string]any
		if meta, _ := e["meta"].(string); json.Unmarshal([]byte(meta), &m) == nil && m["via"] == "magic_link" {
			return m
		}
	}
	t.Fatalf("no identity.user.email_verified entry via magic_link")
	return nil
}

// wantMeta checks the counts of a claim's audit meta.
func wantMeta(t *testing.T, m map[string]any, want map[string]float64) {
	t.Helper()
	for k, n := range want {
		if got, _ := m[k].(float64); got != n {
			t.Errorf("audit meta %s = %v; want %v (meta %v)", k, m[k], n, m)
		}
	}
}

// wantNoStep checks that the sign-in r owes no second factor.
func wantNoStep(t *testing.T, what string, r *testenv.Resp) {
	t.Helper()
	if cl := testenv.Claims(t, r.Str("access_token")); r.Get("mfa") != nil || cl["mfa"] != nil {
		t.Fatalf("%s = %s (mfa claim %v); want a session owing no second factor", what, r.Body, cl["mfa"])
	}
}

// TestClaimRemovesTOTP: the registrant confirmed a TOTP factor (and got
// recovery codes) and holds a sign-in owing it; after the owner's magic
// link the owner's sign-ins owe no factor, the account lists none, and the
// registrant's code and recovery code are refused.
func TestClaimRemovesTOTP(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		s := withTOTP(t, env)
		pending := pendingLogin(t, env, s).Str("access_token")

		owner := claimByMagicLink(t, env, s.Account)
		wantNoStep(t, "the owner's magic-link sign-in", owner)
		access := owner.Str("access_token")
		env.Call(t, "GET", "/v1/me/orgs", access, nil).Want(t, 200)
		wantMeta(t, claimMeta(t, env, access, s.OrgID), map[string]float64{"factors_removed": 1, "recovery_codes_removed": 10, "passkeys_removed": 0})
		f := env.Call(t, "GET", "/v1/me/factors", access, nil).Want(t, 200)
		if rows := f.List(t, "factors"); len(rows) != 0 || f.Get("recovery_codes_left") != float64(0) {
			t.Errorf("factors after the claim = %s; want none and no recovery codes", f.Body)
		}
		// The registrant's pending sign-in is gone, and with it any step.
		env.Call(t, "POST", "/v1/auth/mfa", pending, step("totp", totpAt(t, env, s.Secret, 0))).Want(t, 401)
		env.Call(t, "POST", "/v1/auth/mfa", pending, step("recovery_code", s.Codes[0])).Want(t, 401)

		// The owner's own password sign-in owes no factor either, and a
		// new sign-in the registrant's factor would have held is not
		// asked for it: its code and recovery code take no step.
		env.Call(t, "POST", "/v1/me/password", access, map[string]string{"new_password": "owner-password"}).Want(t, 200)
		l := env.Login(t, s.Email, "owner-password").Want(t, 200)
		wantNoStep(t, "the owner's password sign-in", l)
		env.Call(t, "GET", "/v1/me/orgs", l.Str("access_token"), nil).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/mfa", l.Str("access_token"), step("totp", totpAt(t, env, s.Secret, 0))).Want(t, 400)
		env.Call(t, "POST", "/v1/auth/mfa", l.Str("access_token"), step("recovery_code", s.Codes[1])).Want(t, 400)

		// The owner may set up a factor of their own; the registrant's
		// codes are not theirs.
		e := env.Call(t, "POST", "/v1/me/factors/totp", l.Str("access_token"), nil).Want(t, 201)
		c := env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", l.Str("access_token"),
			map[string]string{"code": totpAt(t, env, e.Str("secret"), 0)}).Want(t, 200)
		m2 := &mfaAccount{Account: &testenv.Account{Email: s.Email, Password: "owner-password"}}
		p2 := pendingLogin(t, env, m2).Str("access_token")
		env.Call(t, "POST", "/v1/auth/mfa", p2, step("recovery_code", s.Codes[2])).Want(t, 401)
		env.Call(t, "POST", "/v1/auth/mfa", p2, step("recovery_code", testenv.Strings(c.Get("recovery_codes"))[0])).Want(t, 200)

	})
}

// TestClaimRemovesPasskey: the registrant added a passkey; after the
// owner's magic link it signs in no more, the account lists none, and the
// owner signs in normally.
func TestClaimRemovesPasskey(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		s := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		c, _ := addPasskey(t, env, s, auth)
		passkeySignIn(t, env, auth, c).Want(t, 200) // it works before the claim
		// A sign-in begun before the claim and finished after it.
		o := passkeyBegin(t, env, "/v1/auth/passkey/begin", "")

		owner := claimByMagicLink(t, env, s)
		wantNoStep(t, "the owner's magic-link sign-in", owner)
		env.Call(t, "POST", "/v1/auth/passkey/finish", "", finishBody(o, auth.Assert(c, o.Challenge()))).Want(t, 401)
		passkeySignIn(t, env, auth, c).Want(t, 401)
		access := owner.Str("access_token")
		if rows := env.Call(t, "GET", "/v1/me/passkeys", access, nil).Want(t, 200).List(t, "passkeys"); len(rows) != 0 {
			t.Errorf("passkeys after the claim = %v; want none", rows)
		}
		wantMeta(t, claimMeta(t, env, access, s.OrgID), map[string]float64{"passkeys_removed": 1, "factors_removed": 0})
		// The owner signs in normally, and may add a passkey of their own.
		env.Call(t, "GET", "/v1/me/orgs", access, nil).Want(t, 200)
		env.Call(t, "POST", "/v1/me/password", access, map[string]string{"new_password": "owner-password"}).Want(t, 200)
		wantNoStep(t, "the owner's password sign-in", env.Login(t, s.Email, "owner-password").Want(t, 200))
		mine := &testenv.Account{Email: s.Email, Access: claimByMagicLink(t, env, s).Str("access_token")}
		oc, _ := addPasskey(t, env, mine, auth)
		if r := passkeySignIn(t, env, auth, oc).Want(t, 200); r.Str("user.id") != s.UserID {
			t.Errorf("owner's passkey signed in %s; want %s", r.Str("user.id"), s.UserID)
		}

	})
}

// TestClaimRemovesPending: an enrolment never confirmed and a passkey
// registration begun but not finished go too: the owner finds no factor,
// and no ceremony of the account is left.
func TestClaimRemovesPending(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		s := env.Register(t)
		env.Call(t, "POST", "/v1/me/factors/totp", s.Access, nil).Want(t, 201)
		passkeyBegin(t, env, "/v1/me/passkeys/begin", s.Access)
		if n := ceremoniesOf(t, env, s.UserID); n != 1 {
			t.Fatalf("ceremonies before the claim = %d; want 1", n)
		}

		owner := claimByMagicLink(t, env, s)
		access := owner.Str("access_token")
		if rows := env.Call(t, "GET", "/v1/me/factors", access, nil).Want(t, 200).List(t, "factors"); len(rows) != 0 {
			t.Errorf("factors after the claim = %v; want none (the unconfirmed enrolment removed)", rows)
		}
		if n := ceremoniesOf(t, env, s.UserID); n != 0 {
			t.Errorf("ceremonies after the claim = %d; want 0", n)
		}
		wantMeta(t, claimMeta(t, env, access, s.OrgID), map[string]float64{"factors_removed": 1, "ceremonies_removed": 1})
	})
}

// ceremoniesOf counts the begun passkey ceremonies of userID.
func ceremoniesOf(t *testing.T, env *testenv.Env, userID string) int {
	t.Helper()
	var n int
	if err := env.SQL.DB().QueryRow(`SELECT COUNT(*) FROM passkey_ceremonies WHERE user_id = $1`, userID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestClaimAcrossInstances: the claim on one instance refuses the
// registrant's passkey on another of the same database, for a sign-in
// begun there before the claim and one begun after.
func TestClaimAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			one := testenv.New(t, db, testenv.Options{})
			two := testenv.New(t, db, testenv.Options{DB: one.SQL})
			s := one.Register(t)
			auth := passkeytest.New(webOrigin, webRPID)
			c, _ := addPasskey(t, one, s, auth)
			passkeySignIn(t, two, auth, c).Want(t, 200)
			o := passkeyBegin(t, two, "/v1/auth/passkey/begin", "")

			claimByMagicLink(t, one, s)
			two.Call(t, "POST", "/v1/auth/passkey/finish", "", finishBody(o, auth.Assert(c, o.Challenge()))).Want(t, 401)
			passkeySignIn(t, two, auth, c).Want(t, 401)
			passkeySignIn(t, one, auth, c).Want(t, 401)
		})
	}
}

// TestClaimRegistrationRace: a passkey registration whose finish reaches
// the service after the claim (its ceremony taken before the claim
// removed it, its token not yet refused on an instance whose revocation
// list has not polled) stores nothing: the finish checks the session in
// its transaction, after the account's row.
func TestClaimRegistrationRace(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		s := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		o := passkeyBegin(t, env, "/v1/me/passkeys/begin", s.Access)
		_, att, err := auth.Create(o)
		if err != nil {
			t.Fatal(err)
		}
		var hash, kind, user, session string
		var expires int64
		if err := env.SQL.DB().QueryRow(`SELECT id_hash, kind, user_id, session, expires_at FROM passkey_ceremonies WHERE user_id = $1`,
			s.UserID).Scan(&hash, &kind, &user, &session, &expires); err != nil {
			t.Fatal(err)
		}

		claimByMagicLink(t, env, s)
		// The ceremony as the finish held it before the claim.
		env.Exec(t, `INSERT INTO passkey_ceremonies (id_hash, kind, user_id, session, expires_at) VALUES ($1, $2, $3, $4, $5)`,
			hash, kind, user, session, expires)
		sid, _ := testenv.Claims(t, s.Access)["sid"].(string)
		p := &gatehouse.Principal{UserID: s.UserID, SessionID: sid, Via: gatehouse.ViaPassword}
		if _, err := env.Svc.FinishPasskeyRegistration(context.Background(), p, o.CeremonyID, "late", att); gatehouse.ErrorKind(err) != gatehouse.KindUnauthorized {
			t.Errorf("finish after the claim: %v; want the session ended (401)", err)
		}
		var n int
		if err := env.SQL.DB().QueryRow(`SELECT COUNT(*) FROM passkeys WHERE user_id = $1`, s.UserID).Scan(&n); err != nil || n != 0 {
			t.Errorf("passkeys after the late finish = %d (%v); want 0", n, err)
		}
	})
}
