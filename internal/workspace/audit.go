package workspace

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"strings"

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
}

// ActorSCIM is the AuditFilter.Actor of every SCIM change (actors
// "scim:<token id>").
const ActorSCIM = "scim"

// check refuses an actor that names no one.
func (f AuditFilter) check() error {
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

// ActorNames maps the actors of entries (an audit log the caller was just
// allowed to read) to their users' names, or their addresses when they have
// none; actors whose user no longer exists are left out, so a page shows
// their id.
func (s *Service) ActorNames(ctx context.Context, entries []gatehouse.AuditEntry) (map[string]string, error) {
	names := map[string]string{}
	for _, e := range entries {
		if _, seen := names[e.ActorID]; seen || e.ActorID == "" {
			continue
		}
		u, err := s.store.UserByID(ctx, e.ActorID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			names[e.ActorID] = ""
			continue
		}
		if err != nil {
			return nil, gatehouse.Internal("audit actor", err)
		}
		names[e.ActorID] = cmp.Or(u.Name, u.Email)
	}
	for id, n := range names {
		if n == "" {
			delete(names, id)
		}
	}
	return names, nil
}
