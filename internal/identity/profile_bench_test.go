package identity_test

import (
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// BenchmarkMyOrgs measures GET /v1/me/orgs for a user in 200 orgs (the
// personal org and 199 team orgs of 3 members each), on SQLite.
func BenchmarkMyOrgs(b *testing.B) {
	env := testenv.New(b, "sqlite", testenv.Options{})
	a := env.Register(b)
	db := env.Store.DB()
	for i := range 199 {
		org := fmt.Sprintf("00000000-0000-4000-9000-%012d", i)
		if _, err := db.Exec(`INSERT INTO orgs (id, name, slug, kind, created_at) VALUES ($1, $2, $3, 'team', 1)`, org, fmt.Sprintf("Team %d", i), fmt.Sprintf("team-%d", i)); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', $3)`, org, a.UserID, int64(i+2)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		env.Do(b, "GET", "/v1/me/orgs", a.Access, nil).Want(b, 200)
	}
}
