package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
)

// Migration 00190 moves the live refresh token's hash into its session and
// the rest into the history. Tokens issued before it name no session:
// each keeps working once, its successor names its session, and a rotated
// one presented again still revokes the session; an old token also keeps
// a hosted-page browser signed in, signs out, and refreshes an OAuth
// grant for its client only. The test writes such tokens into the schema
// as it was (down to 00180) and serves the database migrated back up; the
// token issued at the newer schema survives the round trip.
func TestRefreshTokensMigrate(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			url := testenv.FreshURL(t, db)
			before := open(t, url)
			a := testenv.New(t, db, testenv.Options{DB: before}).Register(t)
			if err := before.MigrateDownTo(ctx, 180); err != nil {
				t.Fatalf("down to 00180: %v", err)
			}

			// Sessions of a's with tokens of the old kind: the live one of
			// each and, for the first, one rotated two hours ago; the
			// others stand for a browser's cookie, a client that signs out
			// and an OAuth client's grant.
			now := time.Now()
			session := func(grant string) (sid, live string) {
				sid, live = uuid.NewString(), testenv.RandomHex(32)
				via, org := "password", ""
				if grant != "" {
					via, org = "oauth", a.OrgID
				}
				exec(t, before, `INSERT INTO sessions (id, user_id, via, grant_id, org_id, user_agent, ip, created_at, expires_at, last_used_at)
					VALUES ($1, $2, $3, $4, $5, 'Go-http-client/1.1', '127.0.0.1', $6, $7, $6)`,
					sid, a.UserID, via, nullable(grant), nullable(org),
					now.Add(-3*time.Hour).UnixMicro(), now.Add(30*24*time.Hour).UnixMicro())
				exec(t, before, `INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
					token.Hash(live), sid, now.Add(-2*time.Hour).UnixMicro(), now.Add(30*24*time.Hour).UnixMicro())
				return sid, live
			}
			sid, live := session("")
			rotated := testenv.RandomHex(32)
			exec(t, before, `INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at, rotated_at) VALUES ($1, $2, $3, $4, $5)`,
				token.Hash(rotated), sid, now.Add(-3*time.Hour).UnixMicro(), now.Add(30*24*time.Hour).UnixMicro(), now.Add(-2*time.Hour).UnixMicro())
			_, browser := session("")
			_, signOut := session("")
			grant, client := uuid.NewString(), "client-"+testenv.RandomHex(4)
			exec(t, before, `INSERT INTO oauth_grants (id, user_id, client_id, client_name, org_id, created_at) VALUES ($1, $2, $3, 'Old App', $4, $5)`,
				grant, a.UserID, client, a.OrgID, now.Add(-3*time.Hour).UnixMicro())
			grantSession, oauthToken := session(grant)

			env := testenv.New(t, db, testenv.Options{DB: open(t, url)})
			refresh := func(tok string, want int) string {
				t.Helper()
				return env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": tok}).Want(t, want).Str("refresh_token")
			}
			if next := refresh(a.Refresh, 200); !strings.HasPrefix(next, testenv.SID(t, a.Access)+".") {
				t.Errorf("successor of a's token = %q; want it to name a's session", next)
			}
			next := refresh(live, 200)
			if !strings.HasPrefix(next, sid+".") {
				t.Fatalf("successor of the old live token = %q; want it to name session %s", next, sid)
			}
			// Presented again at once by the same client: two tabs racing,
			// refused but the session lives on.
			refresh(live, 401)
			next = refresh(next, 200)
			// The token rotated two hours before the migration: theft.
			refresh(rotated, 401)
			refresh(next, 401)
			if !strings.Contains(env.Logs.String(), "refresh token reused after rotation; session revoked") {
				t.Errorf("logs = %s; want the session revoked for reuse", env.Logs.String())
			}

			// The hosted pages keep a browser signed in by an old token.
			if b, err := env.Svc.BrowserUser(ctx, browser); err != nil || b.User.ID != a.UserID {
				t.Errorf("BrowserUser(old token) = %v, %v; want a's browser session", b, err)
			}
			// Signing out with an old token ends its session.
			env.Do(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": signOut}).Want(t, 200)
			refresh(signOut, 401)
			// An OAuth client refreshes its old token, for its grant only.
			if _, err := env.Svc.RefreshGrant(ctx, oauthToken, "another-client", "", ""); err == nil {
				t.Error("RefreshGrant by another client succeeded")
			}
			si, err := env.Svc.RefreshGrant(ctx, oauthToken, client, "", "")
			if err != nil || !strings.HasPrefix(si.RefreshToken, grantSession+".") {
				t.Fatalf("RefreshGrant(old token) = %v, %v; want a token naming session %s", si, err, grantSession)
			}
			if _, err := env.Svc.RefreshGrant(ctx, si.RefreshToken, client, "", ""); err != nil {
				t.Errorf("RefreshGrant(its successor) = %v", err)
			}
		})
	}
}

// open opens and migrates the database at url, closed when t ends.
func open(t testing.TB, url string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// nullable is s, or SQL NULL when it is empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func exec(t *testing.T, db *sqlstore.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.DB().Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

// The daily prune deletes the rotated refresh tokens past their expiry
// (the session's, as it stood after the rotation) and nothing else: the
// session's live token keeps working. A fresh database: the prune is
// database-wide.
func TestPruneRefreshHistory(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			env := testenv.New(t, db, testenv.Options{DB: open(t, testenv.FreshURL(t, db))})
			a := env.Register(t)
			next := env.Refresh(t, a.Refresh).Want(t, 200).Str("refresh_token")
			ends := env.Clock.Now().Add(30 * 24 * time.Hour) // the rotated token's expiry
			for _, tc := range []struct {
				before time.Time
				want   int
			}{{ends, 0}, {ends.Add(time.Microsecond), 1}, {ends.Add(time.Hour), 0}} {
				if n, err := env.Store.PruneRefreshHistory(ctx, tc.before); err != nil || n != tc.want {
					t.Errorf("prune before %v = %d, %v; want %d", tc.before, n, err, tc.want)
				}
			}
			env.Refresh(t, next).Want(t, 200)
		})
	}
}
