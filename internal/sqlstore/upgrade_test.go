package sqlstore_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// releases are the releases docs/releases.md records, each with its last
// migration.
func releases(t *testing.T) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile("../../docs/releases.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^\| (v\d+\.\d+\.\d+) \| (\d+) `).FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.ParseInt(m[2], 10, 64)
		out[m[1]] = v
	}
	if len(out) == 0 {
		t.Fatal("docs/releases.md records no release")
	}
	return out
}

// TestUpgradeFromReleases: for each release of docs/releases.md, a
// database with accounts, a team workspace and a tool resource, taken
// back to that release's schema (its last migration), is upgraded to
// HEAD by Open, and the data still works: sign-in, refresh, the
// workspace and the issue. The data is written by HEAD before the
// migrations are rolled back, so a migration whose down step loses data
// fails here too.
func TestUpgradeFromReleases(t *testing.T) {
	for name, last := range releases(t) {
		if last > sqlstore.SchemaVersion() {
			t.Fatalf("%s's last migration %d is above the binary's %d", name, last, sqlstore.SchemaVersion())
		}
		for _, dbName := range testenv.Databases {
			t.Run(name+"/"+dbName, func(t *testing.T) {
				ctx := context.Background()
				url := testenv.FreshURL(t, dbName)
				before := open(t, url)
				env := testenv.New(t, dbName, testenv.Options{DB: before})
				owner, org := env.Team(t)
				team := env.CreateTeam(t, owner.Token, org, "Platform")
				issue := env.Do(t, "POST", "/tasks/v1/issues", owner.Token, map[string]any{"teamId": team, "title": "Kept"}).Want(t, 200).Str("issue.id")
				if err := before.MigrateDownTo(ctx, last); err != nil {
					t.Fatalf("down to %s (%d): %v", name, last, err)
				}
				v, pending, err := before.Schema(ctx)
				if err != nil || v != last || pending != (last < sqlstore.SchemaVersion()) {
					t.Fatalf("at %s: schema %d, pending %v, %v", name, v, pending, err)
				}
				after := open(t, url) // upgrades to HEAD
				if v, pending, err := after.Schema(ctx); err != nil || pending || v != sqlstore.SchemaVersion() {
					t.Fatalf("after the upgrade: schema %d, pending %v, %v", v, pending, err)
				}
				up := testenv.New(t, dbName, testenv.Options{DB: after})
				r := up.Login(t, owner.Email, owner.Password).Want(t, 200)
				up.Refresh(t, owner.Refresh).Want(t, 200)
				tok := up.Do(t, "POST", "/v1/auth/switch-org", r.Str("access_token"), map[string]string{"org_id": org}).Want(t, 200).Str("access_token")
				up.Do(t, "GET", "/v1/orgs/"+org, tok, nil).Want(t, 200)
				if got := up.Do(t, "GET", "/tasks/v1/issues/"+issue, tok, nil).Want(t, 200).Str("issue.title"); got != "Kept" {
					t.Errorf("the issue's title after the upgrade: %q", got)
				}
			})
		}
	}
}
