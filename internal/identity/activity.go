package identity

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// ActivityPageSize is how many entries a page of security activity holds.
const ActivityPageSize = 25

// activityActions are the entries an account's security activity lists:
// its sign-ins (and refused ones) and the changes its security notices
// tell of, in whichever workspace they were written.
var activityActions = []string{
	"identity.user.signed_in", "identity.user.signin_failed", "identity.user.locked_out",
	"identity.user.second_factor_failed", "identity.user.second_factor_verified",
	"identity.user.password_changed", "identity.user.password_reset",
	"identity.user.email_change_requested", "identity.user.email_changed", "identity.user.email_change_undone",
	"identity.user.factor_added", "identity.user.factor_removed", "identity.user.recovery_codes_regenerated",
	"identity.user.passkey_added", "identity.user.passkey_removed",
	"identity.user.identity_linked", "identity.user.identity_unlinked", "identity.user.sessions_revoked",
	"identity.api_key.created", "identity.api_key.revoked",
}

// SecurityActivity returns a page of the caller's security activity,
// newest first, from cursor (a page's Next; "" for the newest), and the
// cursor of the next page ("" when there is none). Only entries about the
// caller: theirs as actor or target, of activityActions; a workspace key
// they made and a second step passed with an app are left out.
func (s *Service) SecurityActivity(ctx context.Context, p *gatehouse.Principal, cursor string) ([]gatehouse.AuditEntry, string, error) {
	at, id, err := parseActivityCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	var out []gatehouse.AuditEntry
	for {
		es, err := s.store.PersonActivity(ctx, p.UserID, activityActions, at, id, ActivityPageSize+1)
		if err != nil {
			return nil, "", internal("security activity", err)
		}
		for _, e := range es {
			if len(out) == ActivityPageSize { // and an entry after it
				last := out[len(out)-1]
				return out, strconv.FormatInt(last.At.UnixMicro(), 10) + "_" + last.ID, nil
			}
			at, id = e.At, e.ID
			if aboutPerson(e) {
				out = append(out, e)
			}
		}
		if len(es) <= ActivityPageSize {
			return out, "", nil
		}
	}
}

// aboutPerson reports whether e, one of activityActions, tells of the
// account's security: a workspace's key is the workspace's, and a second
// step passed counts only when it spent a recovery code.
func aboutPerson(e gatehouse.AuditEntry) bool {
	var meta struct{ Kind, Method string }
	_ = json.Unmarshal([]byte(e.Meta), &meta)
	switch e.Action {
	case "identity.api_key.created", "identity.api_key.revoked":
		return meta.Kind == workspace.KeyUser
	case "identity.user.second_factor_verified":
		return meta.Method == FactorRecoveryCode
	}
	return true
}

// parseActivityCursor reads a page's cursor, "<microseconds>_<entry id>".
func parseActivityCursor(c string) (time.Time, string, error) {
	if c == "" {
		return time.Time{}, "", nil
	}
	us, id, ok := strings.Cut(c, "_")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || n <= 0 || !gatehouse.IsID(id) {
		return time.Time{}, "", gatehouse.InvalidField("before", "before must be a page's cursor")
	}
	return time.UnixMicro(n).UTC(), id, nil
}
