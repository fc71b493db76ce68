package workspace_test

import (
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// BenchmarkMembersList measures GET /v1/orgs/{id}/members on an org of 10,000
// members, end to end over HTTP on SQLite (one JOIN query).
func BenchmarkMembersList(b *testing.B) {
	env := testenv.New(b, "sqlite", testenv.Options{})
	a := env.Register(b)
	r := env.Do(b, "POST", "/v1/orgs", a.Access, map[string]string{"name": "Big Org"}).Want(b, 200)
	org, tok := r.Str("org.id"), r.Str("access_token")
	db := env.Store.DB()
	for i := range 9999 {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		if _, err := db.Exec(`INSERT INTO users (id, email, email_key, name, created_at, updated_at) VALUES ($1, $2, $2, 'Bench', 1, 1)`, id, fmt.Sprintf("bench-%d@example.com", i)); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', $3)`, org, id, int64(i+2)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		env.Do(b, "GET", "/v1/orgs/"+org+"/members", tok, nil).Want(b, 200)
	}
}
