package sqlstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// Migration 00230 keeps one TOTP factor per account (issue 23 item 7):
// of the factors concurrent enrolments left, the one sign-ins check (the
// oldest confirmed) or else the newest enrolment; then a unique index
// holds the rule.
func TestOneTOTPFactorMigrate(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			url := testenv.FreshURL(t, db)
			before := open(t, url)
			env := testenv.New(t, db, testenv.Options{DB: before})
			a, b, c := env.Register(t), env.Register(t), env.Register(t)
			if err := before.MigrateDownTo(ctx, 229); err != nil {
				t.Fatalf("down to 00229: %v", err)
			}
			now := time.Now()
			factor := func(user string, age time.Duration, confirmed bool) string {
				id := uuid.NewString()
				var at any
				if confirmed {
					at = now.Add(-age).UnixMicro()
				}
				exec(t, before, `INSERT INTO mfa_factors (id, user_id, kind, secret, created_at, confirmed_at) VALUES ($1, $2, 'totp', 'sealed', $3, $4)`,
					id, user, now.Add(-age).UnixMicro(), at)
				return id
			}
			aKept := factor(a.UserID, 3*time.Hour, true)
			factor(a.UserID, 2*time.Hour, true)
			factor(a.UserID, time.Hour, false)
			factor(b.UserID, 2*time.Hour, false)
			bKept := factor(b.UserID, time.Hour, false)
			cKept := factor(c.UserID, time.Hour, true)

			after := open(t, url)
			rows, err := after.DB().Query(`SELECT id FROM mfa_factors ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var id string
				rows.Scan(&id)
				got = append(got, id)
			}
			rows.Close()
			want := []string{aKept, bKept, cKept}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("factors after the migration %v; want %v", got, want)
			}
			if _, err := after.DB().Exec(`INSERT INTO mfa_factors (id, user_id, kind, secret, created_at) VALUES ($1, $2, 'totp', 'sealed', $3)`,
				uuid.NewString(), c.UserID, now.UnixMicro()); err == nil {
				t.Fatal("a second TOTP factor was stored; want the unique index to refuse it")
			}
		})
	}
}
