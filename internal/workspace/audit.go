package workspace

import (
	"cmp"
	"context"
	"errors"
	"strconv"

	"github.com/gatehouse/gatehouse"
)

// Audit log limits (spec section 8).
const (
	AuditDefaultLimit = 100
	AuditMaxLimit     = 500
)

// AuditLog returns an org's newest audit entries, optionally filtered by
// tool and action, and the distinct tools present in its log.
func (s *Service) AuditLog(ctx context.Context, p *gatehouse.Principal, orgID, tool, action, limit string) ([]gatehouse.AuditEntry, []string, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, PermSettings, false); err != nil {
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
	entries, err := s.store.AuditLog(ctx, orgID, tool, action, n)
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
