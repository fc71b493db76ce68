package pages_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestRoleDescriptions (issue 30 item 4, "role descriptions wherever a
// role is picked"): the invitation form, the members page's role
// changes, the workspace key form and the team's member form describe
// their roles beside the select, which names the description
// (aria-describedby); the owner's line only where owner can be picked.
func TestRoleDescriptions(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		env.Join(t, owner, org, "member")
		team := env.Do(t, "POST", "/v1/orgs/"+org+"/teams", owner.Token, map[string]any{"name": "Night shift"}).Want(t, 200).Str("team.id")
		b := signedIn(t, env, owner)
		ws := "/workspaces/" + org
		admin := "also invites and manages members, teams, tools, domains, API keys, applications, single sign-on and settings, and reads the audit log."
		ownerLine := "everything, including making and removing owners and deleting the workspace."

		res := b.Get(t, ws+"/invitations")
		wantPage(t, "invitations", res, 200, `<select id="role" name="role" aria-describedby="roles-help">`, `id="roles-help"`, admin)
		wantNot(t, "invitations", res, ownerLine)
		wantPage(t, "members", b.Get(t, ws+"/members"), 200, `name="role" class="small" aria-describedby="roles-help"`, admin, ownerLine)
		res = b.Get(t, ws+"/keys")
		wantPage(t, "workspace keys", res, 200, `name="role" aria-describedby="roles-help"`, "billing contact", admin)
		wantNot(t, "workspace keys", res, ownerLine)
		wantPage(t, "team", b.Get(t, ws+"/teams/"+team), 200, `aria-describedby="team-roles-help"`, `id="team-roles-help"`,
			"also manages the team: its name, description and members.")
	})
}

// wantNot fails when the page shows text.
func wantNot(t *testing.T, what string, res *testenv.Page, text string) {
	t.Helper()
	if strings.Contains(res.Body, text) {
		t.Fatalf("%s: the page shows %q", what, text)
	}
}
