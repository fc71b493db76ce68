package pages_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestGermanNouns: the names pages build in Go or take from the domain
// (roles, tools, a workspace's kind, a device, a sign-in's method, the
// date a member joined, a count of members) are German on German pages.
func TestGermanNouns(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Hafen", [2]string{owner.UserID, "owner"}, [2]string{member.UserID, "member"})
		b := speaking(signedIn(t, env, owner), "de")
		base := "/workspaces/" + org

		res := b.Get(t, base+"/members")
		wantPage(t, "members", res, 200, "Sie sind hier Inhaber.", " · Mitglied · ", `<option value="member" selected>Mitglied</option>`,
			`<option value="billing">Abrechnung</option>`, "2 Mitglieder")
		if !regexp.MustCompile(`beigetreten( am)? \d{2}\.\d{2}\.\d{4}`).MatchString(res.Body) {
			t.Errorf("members: no German date of joining in %q", errorLinesAround(res.Body, "beigetreten"))
		}
		wantPage(t, "tools", b.Get(t, base+"/tools"), 200, `<span class="item-title">Aufgaben</span>`, `<input type="hidden" name="tool" value="tasks">`)
		wantPage(t, "workspaces", b.Get(t, "/account/workspaces"), 200, "Inhaber · 2 Mitglieder")
		wantPage(t, "activity", b.Get(t, "/account/activity"), 200, "mit Passwort")
		for _, path := range []string{base + "/members", base + "/tools", "/account/workspaces", "/account/activity"} {
			res := b.Get(t, path)
			for _, english := range []string{">owner<", "· owner", ">member<", "· member ·", ">tasks<", "with password", " on Linux"} {
				if strings.Contains(res.Body, english) {
					t.Errorf("%s shows %q on a German page", path, english)
				}
			}
		}
		if got := pages.DeviceNameIn(i18n.German, "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"); got != "Firefox auf Linux" {
			t.Errorf("German device name %q", got)
		}
	})
}

// errorLinesAround are the lines of body that contain s.
func errorLinesAround(body, s string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}
