package sqlstore_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestOnRevokeEntries: a committed revoking transaction hands OnRevoke's
// fn exactly the revocations it recorded (what the revocation list adds
// without a read); one that records nothing, or rolls back, calls nothing.
func TestOnRevokeEntries(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		acc := env.Register(t)
		env.Login(t, acc.Email, acc.Password) // a second session
		var mu sync.Mutex
		var got [][]revocation.Entry
		store := env.SQL.OnRevoke(func(_ context.Context, es []revocation.Entry) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, es)
		}).Identity()
		at := time.UnixMicro(time.Now().UnixMicro()).UTC()
		if ok, err := store.RevokeSession(ctx, "00000000-0000-4000-8000-000000000000", at); err != nil || ok {
			t.Fatalf("RevokeSession(unknown) = %v, %v; want false, nil", ok, err)
		}
		if len(got) != 0 {
			t.Fatalf("a revocation that recorded nothing called fn with %v", got)
		}
		if err := store.RevokeUserSessions(ctx, acc.UserID, "", at); err != nil {
			t.Fatal(err)
		}
		rows, err := env.SQL.DB().Query(`SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NOT NULL`, acc.UserID)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		rows.Close()
		if len(got) != 1 || len(want) != 2 {
			t.Fatalf("fn called %d times (%v) for %d revoked sessions; want once for 2", len(got), got, len(want))
		}
		var subjects []string
		for _, e := range got[0] {
			if e.Kind != revocation.KindSession || e.OrgID != "" || !e.At.Equal(at) {
				t.Errorf("entry %+v; want kind session, no org, at %v", e, at)
			}
			subjects = append(subjects, e.Subject)
		}
		slices.Sort(subjects)
		slices.Sort(want)
		if !slices.Equal(subjects, want) {
			t.Errorf("entries name %v; want the revoked sessions %v", subjects, want)
		}
		if again, err := store.RevokeSession(ctx, want[0], at); err != nil || again || len(got) != 1 {
			t.Errorf("revoking a revoked session = %v, %v and %d calls; want false, nil and still 1", again, err, len(got))
		}
	})
}
