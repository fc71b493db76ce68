package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/revocation"
)

// queueLogouts queues, in c's transaction, a back-channel logout
// (oauth.LogoutJob) for each live grant session that the revocations es
// end, before the revoking write changes them (see oauth/backchannel.go
// for which sessions each event ends):
//   - session: the sessions themselves when they are grant sessions, and,
//     for a sign-in session, the live grant sessions approved from it
//     (told, not ended: Cascade);
//   - user: every live grant session of the user;
//   - member: the user's live grant sessions in that workspace;
//   - org: every live grant session in the workspace.
//
// Keys and policy rows end no session. Whether the client has a
// back-channel logout URI is looked at when the job runs, so a job is
// queued for every ended grant session; the worker sends nothing for a
// client without one.
func (c conn) queueLogouts(ctx context.Context, es []revocation.Entry, at time.Time) error {
	var sessions, users []string
	var members [][2]string
	var orgs []string
	for _, e := range es {
		switch e.Kind {
		case revocation.KindSession:
			sessions = append(sessions, e.Subject)
		case revocation.KindUser:
			users = append(users, e.Subject)
		case revocation.KindMember:
			members = append(members, [2]string{e.Subject, e.OrgID})
		case revocation.KindOrg:
			orgs = append(orgs, e.Subject)
		}
	}
	const sel = `SELECT s.id, s.user_id, g.client_id FROM sessions s JOIN oauth_grants g ON g.id = s.grant_id WHERE `
	const live = ` AND s.revoked_at IS NULL AND s.expires_at > $1`
	seen := map[string]bool{}
	var jobs []river.InsertManyParams
	add := func(cascade bool, query string, args ...any) error {
		rows, err := c.w().QueryContext(ctx, query, append([]any{micros(at)}, args...)...)
		if err != nil {
			return fmt.Errorf("grant sessions ended: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var j oauth.LogoutJob
			if err := rows.Scan(&j.SessionID, &j.Subject, &j.ClientID); err != nil {
				return err
			}
			if seen[j.SessionID] {
				continue
			}
			seen[j.SessionID] = true
			j.Cascade = cascade
			jobs = append(jobs, river.InsertManyParams{Args: j, InsertOpts: &river.InsertOpts{MaxAttempts: oauth.LogoutAttempts}})
		}
		return rows.Err()
	}
	// One statement per session, not an IN list of any length, so the
	// statement cache holds two statements, not one per count.
	for _, id := range sessions {
		if err := add(false, sel+`s.id = $2`+live, id); err != nil {
			return err
		}
	}
	for _, id := range sessions {
		if err := add(true, sel+`g.session_id = $2`+live, id); err != nil {
			return err
		}
	}
	for _, u := range users {
		if err := add(false, sel+`g.user_id = $2`+live, u); err != nil {
			return err
		}
	}
	for _, m := range members {
		if err := add(false, sel+`g.user_id = $2 AND g.org_id = $3`+live, m[0], m[1]); err != nil {
			return err
		}
	}
	for _, o := range orgs {
		if err := add(false, sel+`g.org_id = $2`+live, o); err != nil {
			return err
		}
	}
	return c.insertJobs(ctx, jobs)
}
