package workspace

import (
	"context"
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
			return nil, nil, gatehouse.Invalid("limit must be an integer from 1 to %d", AuditMaxLimit)
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
