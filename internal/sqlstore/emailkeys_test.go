package sqlstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// Migration 00100 keys a stored Unicode address by its A-label; of one
// mailbox stored under two spellings, the one spelled as its key keeps it.
func TestEmailKeyBackfill(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		local := "old-" + testenv.RandomHex(4)
		alone, dupU, dupA := uuid.NewString(), uuid.NewString(), uuid.NewString()
		// Rows as the migration's SQL leaves them: each key is the address.
		for _, u := range []struct {
			id, email string
			created   int64
		}{
			{alone, local + "@bücher.example", 1},
			{dupU, "dup-" + local + "@exämple.com", 1},
			{dupA, "dup-" + local + "@xn--exmple-cua.com", 2},
		} {
			if _, err := env.Store.DB().Exec(`INSERT INTO users (id, email, email_key, name, created_at, updated_at) VALUES ($1, $2, $2, 'Old', $3, $3)`,
				u.id, u.email, u.created); err != nil {
				t.Fatal(err)
			}
		}
		tx, err := env.Store.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := sqlstore.BackfillEmailKeys(ctx, tx); err != nil {
			tx.Rollback()
			t.Fatalf("backfill: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ key, want string }{
			{local + "@xn--bcher-kva.example", alone},
			{"dup-" + local + "@xn--exmple-cua.com", dupA},
			{"dup-" + local + "@exämple.com", dupU}, // kept its old key: reached by no spelling
		} {
			u, err := env.Store.UserByEmail(ctx, tc.key)
			if err != nil || u.ID != tc.want {
				t.Errorf("UserByEmail(%q) = %v, %v; want user %s", tc.key, u, err, tc.want)
			}
		}
	})
}
