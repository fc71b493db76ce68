package workspace

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
)

// Audit log limits (spec section 8).
const (
	AuditDefaultLimit = 100
	AuditMaxLimit     = 500
)

// AuditFilter selects audit entries; an empty field selects every entry.
type AuditFilter struct {
	Tool, Action string
	// Actor is an actor id (a user's, or "scim:<token id>" for one SCIM
	// token), or ActorSCIM for every SCIM token.
	Actor string
	// From and To bound the entries' time, From included and To not (the
	// zero time: no bound).
	From, To time.Time
}

// ActorSCIM is the AuditFilter.Actor of every SCIM change (actors
// "scim:<token id>").
const ActorSCIM = "scim"

// check refuses an actor that names no one, and a range that ends before
// it starts.
func (f AuditFilter) check() error {
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return gatehouse.InvalidField("to", "the end of the range must be after its start")
	}
	a := f.Actor
	if a == "" || a == ActorSCIM || gatehouse.IsID(a) || (strings.HasPrefix(a, ActorSCIM+":") && gatehouse.IsID(a[len(ActorSCIM)+1:])) {
		return nil
	}
	return gatehouse.InvalidField("actor", "actor must be scim, scim:<token id> or a user id")
}

// AuditLog returns an org's newest audit entries, optionally filtered by
// tool, action and actor, and the distinct tools present in its log.
func (s *Service) AuditLog(ctx context.Context, p *gatehouse.Principal, orgID string, f AuditFilter, limit string) ([]gatehouse.AuditEntry, []string, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, PermSettings, false); err != nil {
		return nil, nil, err
	}
	if err := f.check(); err != nil {
		return nil, nil, err
	}
	n := AuditDefaultLimit
	if limit != "" {
		v, err := strconv.Atoi(limit)
		if err != nil || v < 1 || v > AuditMaxLimit {
			return nil, nil, gatehouse.InvalidField("limit", "limit must be an integer from 1 to %d", AuditMaxLimit)
		}
		n = v
	}
	entries, err := s.store.AuditLogWhere(ctx, orgID, f, n)
	if err != nil {
		return nil, nil, gatehouse.Internal("audit log", err)
	}
	tools, err := s.store.AuditTools(ctx, orgID)
	if err != nil {
		return nil, nil, gatehouse.Internal("audit tools", err)
	}
	return entries, tools, nil
}

// AuditRef is a thing an audit entry names, by kind and id: a user
// ("user"), or a thing of the workspace ("team", "api_key", "scim_token",
// "application", "sso_connection", "domain").
type AuditRef struct{ Type, ID string }

// AuditNamed reports whether AuditNames resolves targets of kind t (so
// one it leaves out is gone).
func AuditNamed(t string) bool {
	switch t {
	case "user", "team", "api_key", "scim_token", "application", "sso_connection", "domain":
		return true
	}
	return false
}

// AuditNames maps the actors and targets of entries (an audit log of org
// orgID the caller was just allowed to read) to their names as they are
// now, in one read: a user's name or address, a team's or key's name (the
// targets, and the things the meta names by "<kind>_id"). A
// thing gone since is left out, so a page can say it was deleted. The
// workspace's things are looked up in orgID only.
func (s *Service) AuditNames(ctx context.Context, orgID string, entries []gatehouse.AuditEntry) (map[AuditRef]string, error) {
	refs := map[AuditRef]bool{}
	for _, e := range entries {
		switch a := e.ActorID; {
		case gatehouse.IsID(a):
			refs[AuditRef{"user", a}] = true
		case strings.HasPrefix(a, ActorSCIM+":") && gatehouse.IsID(a[len(ActorSCIM)+1:]):
			refs[AuditRef{"scim_token", a[len(ActorSCIM)+1:]}] = true
		}
		if AuditNamed(e.TargetType) && gatehouse.IsID(e.TargetID) {
			refs[AuditRef{e.TargetType, e.TargetID}] = true
		}
		var meta map[string]any
		_ = json.Unmarshal([]byte(e.Meta), &meta)
		for k, v := range meta {
			if kind, ok := strings.CutSuffix(k, "_id"); ok && AuditNamed(kind) {
				if id, _ := v.(string); gatehouse.IsID(id) {
					refs[AuditRef{kind, id}] = true
				}
			}
		}
	}
	if len(refs) == 0 {
		return map[AuditRef]string{}, nil
	}
	names, err := s.store.AuditNames(ctx, orgID, refs)
	if err != nil {
		return nil, gatehouse.Internal("audit names", err)
	}
	return names, nil
}
