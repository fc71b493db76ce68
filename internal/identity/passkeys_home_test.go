package identity_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPasskeySignInHomeWorkspace: a passkey sign-in (whose passkey read
// brings the account's default workspace along) opens the session in
// that workspace with the account's role there; a default workspace the
// account is no longer a member of, or that is deleted, is not used: the
// session opens in the personal workspace.
func TestPasskeySignInHomeWorkspace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		c, _ := addPasskey(t, env, a, auth)
		personal := passkeySignIn(t, env, auth, c).Want(t, 200).Str("org.id")
		team := env.TeamOrg(t, "Home", [2]string{a.UserID, "member"})
		env.Exec(t, `UPDATE users SET default_org_id = $1 WHERE id = $2`, team, a.UserID)

		r := passkeySignIn(t, env, auth, c).Want(t, 200)
		if got, role := r.Str("org.id"), r.Str("org.role"); got != team || role != "member" {
			t.Fatalf("signed in to workspace %s as %q; want the default %s as member", got, role, team)
		}

		env.Exec(t, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, team, a.UserID)
		if got := passkeySignIn(t, env, auth, c).Want(t, 200).Str("org.id"); got != personal {
			t.Fatalf("after leaving the default workspace, signed in to %s; want the personal %s", got, personal)
		}

		env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', $3)`,
			team, a.UserID, env.Clock.Now().UnixMicro())
		env.Exec(t, `UPDATE users SET default_org_id = $1 WHERE id = $2`, team, a.UserID)
		env.Exec(t, `UPDATE orgs SET deleted_at = $1 WHERE id = $2`, env.Clock.Now().UnixMicro(), team)
		if got := passkeySignIn(t, env, auth, c).Want(t, 200).Str("org.id"); got != personal {
			t.Fatalf("with the default workspace deleted, signed in to %s; want the personal %s", got, personal)
		}
	})
}
