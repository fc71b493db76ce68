package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestUsersAndSessionsCommands: users list and show name the accounts
// (never a password hash); an unknown address is an error; sessions
// revoke --user ends the account's sessions, whose refresh token and
// full-session access token stop working, and audits it with the actor
// "system". Another account's sessions go on.
func TestUsersAndSessionsCommands(t *testing.T) {
	for _, dbName := range testenv.Databases {
		t.Run(dbName, func(t *testing.T) {
			ctx := context.Background()
			url := testenv.FreshURL(t, dbName)
			db, err := sqlstore.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			env := testenv.New(t, dbName, testenv.Options{DB: db})
			a, b := env.Register(t), env.Register(t)
			getenv := testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url})
			cli := func(args ...string) (int, string, string) {
				var stdout, stderr strings.Builder
				code := run(ctx, args, getenv, &stdout, &stderr)
				return code, stdout.String(), stderr.String()
			}
			code, out, errOut := cli("users", "list")
			if code != 0 || !strings.Contains(out, a.Email) || !strings.Contains(out, b.UserID) || strings.Contains(out, "argon2") {
				t.Errorf("users list: %d %q %q", code, out, errOut)
			}
			if code, out, _ := cli("users", "list", "-limit", "1"); code != 0 || strings.Count(out, "\n") != 2 {
				t.Errorf("users list -limit 1: %d %q; want a header and one account", code, out)
			}
			if code, out, _ := cli("users", "show", strings.ToUpper(a.Email)); code != 0 || !strings.Contains(out, a.UserID) || strings.Contains(out, b.Email) {
				t.Errorf("users show: %d %q", code, out)
			}
			if code, _, errOut := cli("users", "show", "nobody@example.com"); code != 1 || !strings.Contains(errOut, "no account") {
				t.Errorf("users show of an unknown address: %d %q", code, errOut)
			}
			if code, _, _ := cli("sessions", "revoke"); code != 2 {
				t.Errorf("sessions revoke without --user: exit %d; want 2", code)
			}
			if code, out, errOut := cli("sessions", "revoke", "--user", a.Email); code != 0 || !strings.Contains(out, a.UserID) {
				t.Fatalf("sessions revoke: %d %q %q", code, out, errOut)
			}
			env.Refresh(t, a.Refresh).Want(t, 401)
			env.Do(t, "GET", "/v1/me/sessions", a.Access, nil).Want(t, 401)
			env.Refresh(t, b.Refresh).Want(t, 200)
			es := env.StoredAudit(t, a.OrgID, "identity.user.sessions_revoked")
			if len(es) != 1 || es[0]["actor_id"] != "system" || es[0]["target_id"] != a.UserID {
				t.Errorf("audit entries %v; want one by system about %s", es, a.UserID)
			}
		})
	}
}

// TestUsersCreateAndDelete: users create makes an account without a
// password (verified when asked), which signs in by emailed link; a
// second create of the address is refused; users delete removes an
// account (its refresh token stops) under the same rule as the owner's
// own deletion: refused while it is a team's only owner with members.
// Both are audited with the actor "system".
func TestUsersCreateAndDelete(t *testing.T) {
	for _, dbName := range testenv.Databases {
		t.Run(dbName, func(t *testing.T) {
			ctx := context.Background()
			url := testenv.FreshURL(t, dbName)
			db, err := sqlstore.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			env := testenv.New(t, dbName, testenv.Options{DB: db})
			getenv := testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url})
			cli := func(args ...string) (int, string, string) {
				var stdout, stderr strings.Builder
				code := run(ctx, args, getenv, &stdout, &stderr)
				return code, stdout.String(), stderr.String()
			}
			email := "new-" + testenv.RandomHex(4) + "@example.com"
			if code, out, errOut := cli("users", "create", email, "--name", "New Person", "--verified"); code != 0 || !strings.Contains(out, " true ") {
				t.Fatalf("users create: %d %q %q", code, out, errOut)
			}
			if code, _, errOut := cli("users", "create", email); code != 1 || !strings.Contains(errOut, "already exists") {
				t.Errorf("a second users create: %d %q", code, errOut)
			}
			if code, _, _ := cli("users", "create", "not-an-address"); code != 1 {
				t.Errorf("users create of a bad address: exit %d; want 1", code)
			}
			tok := env.MagicToken(t, email)
			r := env.Do(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200)
			if r.Str("user.email") != email || r.Get("user.email_verified") != true {
				t.Errorf("sign-in of the created account: %s", r.Body)
			}
			orgID := r.Str("org.id")
			if es := env.StoredAudit(t, orgID, "identity.user.registered"); len(es) != 1 || es[0]["actor_id"] != "system" {
				t.Errorf("registration audit %v; want one by system", es)
			}

			owner, team := env.Team(t)
			env.Join(t, owner, team, "member")
			if code, _, errOut := cli("users", "delete", owner.Email); code != 1 || !strings.Contains(errOut, "only owner") {
				t.Errorf("users delete of a team's only owner: %d %q; want refused", code, errOut)
			}
			env.Refresh(t, owner.Refresh).Want(t, 200)
			solo := env.Register(t)
			if code, out, errOut := cli("users", "delete", solo.Email); code != 0 || !strings.Contains(out, solo.UserID) {
				t.Fatalf("users delete: %d %q %q", code, out, errOut)
			}
			env.Refresh(t, solo.Refresh).Want(t, 401)
			if code, _, _ := cli("users", "show", solo.Email); code != 1 {
				t.Errorf("users show of a deleted account: exit %d; want 1", code)
			}
			if es := env.StoredAudit(t, solo.OrgID, "identity.user.deleted"); len(es) != 1 || es[0]["actor_id"] != "system" {
				t.Errorf("deletion audit %v; want one by system", es)
			}
		})
	}
}
