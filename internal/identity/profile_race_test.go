package identity_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPasswordChangeRacesSessionRevocation runs concurrent password changes
// from one session against concurrent revocations and refreshes of the
// account's other sessions. Afterwards no revoked session may refresh, and
// every listed session must really work.
func TestPasswordChangeRacesSessionRevocation(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		caller := testenv.SID(t, a.Access)
		var mu sync.Mutex
		latest := map[string]string{caller: a.Refresh} // session id → its newest refresh token
		var others []string
		for range 10 {
			acc, ref := env.NewSession(t, a)
			sid := testenv.SID(t, acc)
			latest[sid] = ref
			others = append(others, sid)
		}

		var wg sync.WaitGroup
		passwordStatus := make([]int, 10)
		for i := range 10 {
			wg.Go(func() {
				r := env.Do(t, "POST", "/v1/me/password", a.Access,
					map[string]any{"current_password": a.Password, "new_password": fmt.Sprintf("racing-password-%02d", i)})
				passwordStatus[i] = r.Status
			})
		}
		// Each other session is deleted twice at once: at most one 200.
		deleteStatus := make([][2]int, len(others))
		for i, sid := range others {
			for j := range 2 {
				wg.Go(func() {
					deleteStatus[i][j] = env.Do(t, "DELETE", "/v1/me/sessions/"+sid, a.Access, nil).Status
				})
			}
			// A refresh of the same session races its revocation.
			mu.Lock()
			ref := latest[sid]
			mu.Unlock()
			wg.Go(func() {
				r := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": ref})
				if r.Status == 200 {
					mu.Lock()
					latest[sid] = r.Str("refresh_token")
					mu.Unlock()
				}
			})
		}
		wg.Wait()

		var newPasswords []string
		for i, s := range passwordStatus {
			switch s {
			case 200:
				newPasswords = append(newPasswords, fmt.Sprintf("racing-password-%02d", i))
			case 403: // read the hash after another change committed
			default:
				t.Errorf("password change %d: status %d; want 200 or 403", i, s)
			}
		}
		if len(newPasswords) == 0 {
			t.Fatalf("no password change succeeded: %v", passwordStatus)
		}
		for i, st := range deleteStatus {
			for _, s := range st {
				if s != 200 && s != 404 {
					t.Errorf("delete of session %s: status %d; want 200 or 404", others[i], s)
				}
			}
			if st[0] == 200 && st[1] == 200 {
				t.Errorf("session %s: two concurrent deletes both answered 200; want the second 404 (already revoked)", others[i])
			}
		}

		listed := env.Do(t, "GET", "/v1/me/sessions", a.Access, nil).Want(t, 200).List(t, "sessions")
		if len(listed) != 1 || listed[0]["id"] != caller {
			ids := []any{}
			for _, row := range listed {
				ids = append(ids, row["id"])
			}
			t.Errorf("listed sessions = %v; want only the caller's %s", ids, caller)
		}
		listedIDs := map[string]bool{}
		for _, row := range listed {
			id, _ := row["id"].(string)
			listedIDs[id] = true
		}
		for sid, ref := range latest {
			r := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": ref})
			switch {
			case sid == caller && r.Status != 200:
				t.Errorf("caller's session %s: refresh status %d, body %s; want 200", sid, r.Status, r.Body)
			case sid != caller && r.Status != 401:
				t.Errorf("revoked session %s: refresh status %d; want 401", sid, r.Status)
			case listedIDs[sid] && r.Status != 200:
				t.Errorf("listed session %s: refresh status %d; want 200 (listed sessions must work)", sid, r.Status)
			}
		}

		r := env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password})
		if r.Status != 401 {
			t.Errorf("login with the old password: status %d; want 401", r.Status)
		}
		works := 0
		for _, pw := range newPasswords {
			if env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": pw}).Status == 200 {
				works++
			}
		}
		if works != 1 {
			t.Errorf("new passwords that log in = %d of %v; want exactly 1", works, newPasswords)
		}
	})
}

// TestDeleteMeRacesLastOwner deletes both owners of a team org that has
// another member at the same time: one may go, the other is then the sole
// owner and must get 409, so the org never ends up without an owner.
func TestDeleteMeRacesLastOwner(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for round := range 5 {
			a, b, c := env.Register(t), env.Register(t), env.Register(t)
			org := env.TeamOrg(t, fmt.Sprintf("Race Team %d", round), [2]string{a.UserID, "owner"}, [2]string{b.UserID, "owner"}, [2]string{c.UserID, "member"})
			var wg sync.WaitGroup
			status := make([]int, 2)
			for i, acc := range []*testenv.Account{a, b} {
				wg.Go(func() { status[i] = env.Do(t, "DELETE", "/v1/me", acc.Access, nil).Status })
			}
			wg.Wait()
			if !((status[0] == 200 && status[1] == 409) || (status[0] == 409 && status[1] == 200)) {
				t.Errorf("round %d: statuses %v; want one 200 and one 409", round, status)
			}
			var owners int
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM memberships WHERE org_id = $1 AND role = 'owner'`, org).Scan(&owners); err != nil {
				t.Fatal(err)
			}
			if owners != 1 {
				t.Errorf("round %d: owners left = %d; want 1", round, owners)
			}
		}
	})
}

// TestResendRace sends concurrent resend requests once the throttle minute
// has passed: exactly one of them may mail a new link, the others find it
// and are throttled (spec 4.2 rule 2, section 8). Several rounds, since a
// lost race does not show every time.
func TestResendRace(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for round := range 5 {
			a := env.Register(t)
			if got := env.MailsTo(t, a.Email); got != 1 {
				t.Fatalf("round %d: mails after registration = %d; want 1", round, got)
			}
			env.Clock.Advance(61 * time.Second)
			var wg sync.WaitGroup
			msgs := make([]string, 20)
			for i := range msgs {
				wg.Go(func() {
					r := env.Do(t, "POST", "/v1/me/verify-email/resend", a.Access, nil)
					msgs[i] = fmt.Sprintf("%d %s", r.Status, r.Str("message"))
				})
			}
			wg.Wait()
			throttled := env.Do(t, "POST", "/v1/me/verify-email/resend", a.Access, nil).Want(t, 200).Str("message")
			answers := map[string]int{}
			for _, m := range msgs {
				answers[m]++
			}
			if sent := len(msgs) - answers["200 "+throttled]; sent != 1 {
				t.Errorf("round %d: %d of 20 concurrent resends were not throttled (answers %v); want 1", round, sent, answers)
			}
			if got := env.MailsTo(t, a.Email); got != 2 {
				t.Errorf("round %d: mails after 20 concurrent resends = %d; want 2 (one new link)", round, got)
			}
		}
	})
}

// TestMyOrgsRacePersonalOrg lists the workspaces concurrently while the
// personal org is missing: every request answers 200 and exactly one
// personal org is created (spec 4.2 rule 3).
func TestMyOrgsRacePersonalOrg(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for round := range 3 {
			a := env.Register(t)
			env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, a.OrgID, env.Clock.Now().UnixMicro())
			var wg sync.WaitGroup
			status := make([]int, 10)
			for i := range status {
				wg.Go(func() { status[i] = env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Status })
			}
			wg.Wait()
			for i, s := range status {
				if s != 200 {
					t.Errorf("round %d: request %d: status %d; want 200", round, i, s)
				}
			}
			var n int
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM orgs o JOIN memberships m ON m.org_id = o.id
				WHERE m.user_id = $1 AND o.kind = 'personal' AND o.deleted_at IS NULL`, a.UserID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("round %d: live personal orgs = %d; want 1", round, n)
			}
		}
	})
}

// TestDeleteMeRacesSharedOrgs deletes two accounts at once that share two
// team orgs, joined in opposite orders, each org keeping a third owner:
// both deletions are allowed and must both succeed (no lock-order deadlock
// answered as 500).
func TestDeleteMeRacesSharedOrgs(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for round := range 10 {
			a, b, c := env.Register(t), env.Register(t), env.Register(t)
			env.TeamOrg(t, "First Shared", [2]string{a.UserID, "owner"}, [2]string{b.UserID, "owner"}, [2]string{c.UserID, "owner"})
			env.TeamOrg(t, "Second Shared", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "owner"}, [2]string{c.UserID, "owner"})
			var wg sync.WaitGroup
			resp := make([]*testenv.Resp, 2)
			for i, acc := range []*testenv.Account{a, b} {
				wg.Go(func() { resp[i] = env.Do(t, "DELETE", "/v1/me", acc.Access, nil) })
			}
			wg.Wait()
			env.WaitMail(t) // no background mail is still logging
			for i, r := range resp {
				if r.Status != 200 {
					t.Errorf("round %d: delete %d: status %d, body %s; want 200\nlog: %s", round, i, r.Status, r.Body,
						logLine(env, r.Header.Get("X-Request-Id")))
				}
			}
		}
	})
}

// logLine returns the service log line of a request id.
func logLine(env *testenv.Env, requestID string) string {
	for _, line := range strings.Split(env.Logs.String(), "\n") {
		if requestID != "" && strings.Contains(line, requestID) {
			return line
		}
	}
	return "(none)"
}

// TestDeleteMeRacesRefresh deletes an account while its other sessions
// refresh: the deletion succeeds, each refresh answers 200 (before) or 401
// (after), never 500, and afterwards no session refreshes.
func TestDeleteMeRacesRefresh(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for round := range 5 {
			a := env.Register(t)
			refresh := make([]string, 8)
			for i := range refresh {
				_, refresh[i] = env.NewSession(t, a)
			}
			var wg sync.WaitGroup
			var del *testenv.Resp
			got := make([]*testenv.Resp, len(refresh))
			wg.Go(func() { del = env.Do(t, "DELETE", "/v1/me", a.Access, nil) })
			for i := range refresh {
				wg.Go(func() {
					got[i] = env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": refresh[i]})
				})
			}
			wg.Wait()
			if del.Status != 200 {
				t.Errorf("round %d: DELETE /v1/me: status %d, body %s; want 200\nlog: %s", round, del.Status, del.Body, logLine(env, del.Header.Get("X-Request-Id")))
			}
			for i, r := range got {
				if r.Status != 200 && r.Status != 401 {
					t.Errorf("round %d: refresh %d: status %d, body %s; want 200 or 401\nlog: %s", round, i, r.Status, r.Body, logLine(env, r.Header.Get("X-Request-Id")))
				}
				if r.Status == 200 && del.Status == 200 {
					if again := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": r.Str("refresh_token")}); again.Status != 401 {
						t.Errorf("round %d: refresh %d after the deletion: status %d; want 401", round, i, again.Status)
					}
				}
			}
		}
	})
}

// TestDeleteMeRacesLogin deletes an account while it signs in again: each
// login answers 200 (before) or 401 (after), never 500.
func TestDeleteMeRacesLogin(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for round := range 5 {
			a := env.Register(t)
			var wg sync.WaitGroup
			var del *testenv.Resp
			got := make([]*testenv.Resp, 8)
			wg.Go(func() { del = env.Do(t, "DELETE", "/v1/me", a.Access, nil) })
			for i := range got {
				wg.Go(func() {
					got[i] = env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password})
				})
			}
			wg.Wait()
			if del.Status != 200 {
				t.Errorf("round %d: DELETE /v1/me: status %d, body %s; want 200\nlog: %s", round, del.Status, del.Body, logLine(env, del.Header.Get("X-Request-Id")))
			}
			for i, r := range got {
				if r.Status != 200 && r.Status != 401 {
					t.Errorf("round %d: login %d: status %d, body %s; want 200 or 401\nlog: %s", round, i, r.Status, r.Body, logLine(env, r.Header.Get("X-Request-Id")))
				}
			}
		}
	})
}
