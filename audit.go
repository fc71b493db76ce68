package gatehouse

import "time"

// AuditEntry is one row of the platform-wide audit log, written by identity
// and by every tool.
type AuditEntry struct {
	ID         string
	OrgID      string
	Tool       string
	Action     string
	ActorID    string
	TargetType string
	TargetID   string
	Meta       string // JSON object
	At         time.Time
}
