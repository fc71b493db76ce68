package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse"
)

// RequireRecentAuth returns nil when the caller's session is live and was
// signed in to (password, magic link, passkey or second factor: each opens
// a new session) within the reauthentication window, and otherwise 403
// "sign in again to <action>" (ASVS 7.5.1). A refresh keeps the session,
// so it does not renew the sign-in. Sensitive changes call it: creating
// API keys (personal and org), setting or changing the password, deleting
// the account, ending another session, adding or removing a factor
// (TOTP, recovery codes, passkeys).
func (s *Service) RequireRecentAuth(ctx context.Context, p *gatehouse.Principal, action string) error {
	return s.recentSession(ctx, s.store, p, action)
}

// recentSession is RequireRecentAuth through st (inside a transaction, so
// that the check and the change see the same session).
func (s *Service) recentSession(ctx context.Context, st Store, p *gatehouse.Principal, action string) error {
	now := s.Now()
	ss, err := ownSession(ctx, st, p, now)
	if err != nil {
		return err
	}
	if now.Sub(ss.CreatedAt) > s.reauth {
		return gatehouse.Errorf(gatehouse.KindForbidden, "sign in again to %s: this change needs a sign-in from the last %s", action, window(s.reauth)).WithCode(gatehouse.CodeReauthRequired)
	}
	return nil
}

// window writes a duration as people say it: "15 minutes", "1 hour".
func window(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute")
	}
	return d.String()
}
