package identity_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
)

// TestPasskeyCeremonyCarriesSession: a usernameless sign-in's ceremony id
// carries its challenge, so the finish checks the assertion without
// reading the ceremony; the stored ceremony stays the authority. An id
// whose challenge was swapped for one the caller signed names no
// ceremony; a stored session that is not the one the id carries is
// refused; an id without the session (begun before ids carried it) still
// signs in.
func TestPasskeyCeremonyCarriesSession(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		c, _ := addPasskey(t, env, a, auth)
		const path = "/v1/auth/passkey/finish"
		begin := func() *passkeytest.Options { return passkeyBegin(t, env, "/v1/auth/passkey/begin", "") }

		o := begin()
		parts := strings.Split(o.CeremonyID, ".")
		if len(parts) != 3 || parts[1] != o.Challenge() || parts[2] != "preferred" {
			t.Fatalf("ceremony id %q; want secret.challenge.preferred with challenge %q", o.CeremonyID, o.Challenge())
		}

		t.Run("a swapped challenge names no ceremony", func(t *testing.T) {
			mine := strings.Repeat("A", len(o.Challenge()))
			forged := parts[0] + "." + mine + "." + parts[2]
			env.Call(t, "POST", path, "", map[string]any{"ceremony_id": forged, "credential": auth.Assert(c, mine)}).Want(t, 400)
			// The real ceremony was not used by the forgery.
			env.Call(t, "POST", path, "", finishBody(o, auth.Assert(c, o.Challenge()))).Want(t, 200)
		})

		t.Run("a stored session other than the id's is refused", func(t *testing.T) {
			o := begin()
			other := begin().Challenge()
			env.Exec(t, `UPDATE passkey_ceremonies SET session = REPLACE(session, $1, $2) WHERE id_hash = $3`,
				o.Challenge(), other, token.Hash(o.CeremonyID))
			env.Call(t, "POST", path, "", finishBody(o, auth.Assert(c, o.Challenge()))).Want(t, 400)
			// Refused, the ceremony is used up.
			env.Call(t, "POST", path, "", finishBody(o, auth.Assert(c, o.Challenge()))).Want(t, 400)
		})

		t.Run("an id without the session", func(t *testing.T) {
			o := begin()
			plain := "plain-" + parts[0]
			env.Exec(t, `INSERT INTO passkey_ceremonies (id_hash, kind, user_id, session, expires_at)
				SELECT $1, kind, user_id, session, expires_at FROM passkey_ceremonies WHERE id_hash = $2`,
				token.Hash(plain), token.Hash(o.CeremonyID))
			env.Call(t, "POST", path, "", map[string]any{"ceremony_id": plain, "credential": auth.Assert(c, o.Challenge())}).Want(t, 200)
			env.Call(t, "POST", path, "", map[string]any{"ceremony_id": plain, "credential": auth.Assert(c, o.Challenge())}).Want(t, 400)
		})

		t.Run("a second-factor check's id carries nothing", func(t *testing.T) {
			pk, err := env.Svc.BeginPasskeyCheck(t.Context(), a.UserID)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(pk.CeremonyID, ".") {
				t.Fatalf("check ceremony id %q carries a session; want a plain id", pk.CeremonyID)
			}
		})
	})
}
