package identity

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Events records security events (docs/security-logging.md): the kernel's
// web.SecurityLog, which adds the request's id, client IP and user agent
// from the context it gave the request.
type Events interface {
	Event(ctx context.Context, e gatehouse.SecurityEvent, attrs ...slog.Attr)
}

// The methods a sign-in event names.
const (
	MethodPassword  = "password"
	MethodMagicLink = "magic_link"
	MethodPasskey   = "passkey"
	MethodAPIKey    = "api_key"
	MethodSSO       = "sso"
	MethodSocial    = "social"
)

// event records e; nothing when the service has no Events.
func (s *Service) event(ctx context.Context, e gatehouse.SecurityEvent, attrs ...slog.Attr) {
	if s.events != nil {
		s.events.Event(ctx, e, attrs...)
	}
}

// reason is the safe description of a refusal err: its kind and message
// (written for the client, so never a secret); "internal" for the rest.
func reason(err error) slog.Attr {
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
		return slog.String("reason", e.Message)
	}
	return slog.String("reason", "internal")
}

// signInOutcome records a sign-in by method: EventSignIn with its user and
// session, or EventSignInFailure with its reason and the account when
// known (userID).
func (s *Service) signInOutcome(ctx context.Context, method string, si *SignIn, userID string, err error) {
	if err == nil && si != nil {
		sid, _ := splitRefresh(si.RefreshToken)
		s.event(ctx, gatehouse.EventSignIn, slog.String("user_id", si.User.ID), slog.String("method", method),
			slog.String("session_id", sid), slog.Bool("second_factor_owed", len(si.Factors) > 0))
		return
	}
	attrs := []slog.Attr{slog.String("method", method), reason(err)}
	if userID != "" {
		attrs = append(attrs, slog.String("user_id", userID))
	}
	s.event(ctx, gatehouse.EventSignInFailure, attrs...)
}

// auditQueueMax bounds the audit entries waiting to be written after
// their answers (auditLater): under a flood the rest are dropped, the log
// line of each event still written.
const auditQueueMax = 1000

// auditQueue holds the entries written after their answers, one at a time
// by a goroutine that runs while there are any.
type auditQueue struct {
	mu      sync.Mutex
	jobs    []auditJob
	running bool
	pending sync.WaitGroup
}

type auditJob struct {
	userID, action string
	meta           map[string]any
}

// auditLater writes an entry about userID's account in their personal
// workspace after the answer, in a transaction of its own: a refused
// password's entry, which written before the answer would make a known
// account's refusal slower than an unknown one's. Wait waits for them.
func (s *Service) auditLater(userID, action string, meta map[string]any) {
	q := &s.audits
	q.mu.Lock()
	if len(q.jobs) >= auditQueueMax {
		q.mu.Unlock()
		s.log.Warn("audit entry dropped: too many waiting", "action", "identity."+action, "user_id", userID)
		return
	}
	q.jobs = append(q.jobs, auditJob{userID, action, meta})
	q.pending.Add(1)
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if start {
		go s.writeAudits()
	}
}

// writeAudits writes the queued entries until there are none.
func (s *Service) writeAudits() {
	q := &s.audits
	for {
		q.mu.Lock()
		if len(q.jobs) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		j := q.jobs[0]
		q.jobs = q.jobs[1:]
		q.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.store.Tx(ctx, func(tx Store) error { return s.auditPersonal(ctx, tx, j.userID, "", j.action, j.meta) })
		cancel()
		if err != nil {
			s.log.Error("audit entry not written", "action", "identity."+j.action, "user_id", j.userID, "err", err)
		}
		q.pending.Done()
	}
}

// Wait waits for the audit entries written after their answers.
func (s *Service) Wait() { s.audits.pending.Wait() }

// auditSignIn records si, a sign-in by method from the client of cm, in
// the account's personal workspace audit log, in the sign-in's transaction
// st.
func (s *Service) auditSignIn(ctx context.Context, st Store, si *SignIn, method string, cm gatehouse.SessionMeta) error {
	sid, _ := splitRefresh(si.RefreshToken)
	meta := signInMeta(method, sid, cm)
	if len(si.Factors) > 0 {
		meta["second_factor_owed"] = true
	}
	org := ""
	if si.Org != nil && si.Org.Kind == workspace.OrgPersonal {
		org = si.Org.ID // scoped to it: no read
	}
	return s.auditPersonal(ctx, st, si.User.ID, org, "user.signed_in", meta)
}

// signInMeta is the meta of a sign-in's entry (or a refused one's): its
// method and session (none: ""), and
// the client's address and user agent, which the account's security
// activity page shows.
func signInMeta(method, sessionID string, cm gatehouse.SessionMeta) map[string]any {
	meta := map[string]any{"method": method}
	if sessionID != "" {
		meta["session_id"] = sessionID
	}
	if cm.IP != "" {
		meta["ip"] = cm.IP
	}
	if cm.UserAgent != "" {
		meta["user_agent"] = truncate(cm.UserAgent, 256)
	}
	return meta
}

// auditPersonal writes an entry about userID's account in their personal
// workspace (orgID when the caller knows it, else read), never in a team
// one: its admins do not see where a member signs in from. An account
// without one (deleted meanwhile) gets none.
func (s *Service) auditPersonal(ctx context.Context, st Store, userID, orgID, action string, meta map[string]any) error {
	if orgID == "" {
		o, err := st.PersonalOrg(ctx, userID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil
		}
		if err != nil {
			return internal("find personal workspace", err)
		}
		orgID = o.ID
	}
	if err := s.ws.Audit(ctx, st, orgID, userID, action, "user", userID, meta); err != nil {
		return internal("audit", err)
	}
	return nil
}

// reasonSecondFactor is the reason of a lockout of the second-factor
// attempts (a password lockout's is MethodPassword).
const reasonSecondFactor = "second_factor"
