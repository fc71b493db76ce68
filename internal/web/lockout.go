package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// lockout bounds password guesses per account. It is the one limit behind
// POST /v1/auth/login, the /signin page and POST /v1/me/password; the
// account is the normalised email, so all three fill one bucket.
//
// Ten wrong passwords lock the account; a token comes back each minute.
// A lock must not lock the owner out, so while it holds:
//   - a guess from an IP that failed for this account in the last 15
//     minutes is refused (429) without the password being checked;
//   - a guess from any other IP is checked: the right password signs in
//     and unlocks the account, a wrong one is refused with 429 and marks
//     that IP as failed;
//   - checked guesses are capped per account (3, then one per 5 minutes),
//     so an attacker with many IPs gains few guesses; past the cap only the
//     per-minute token or a magic-link sign-in, which unlocks the account,
//     lets the owner in.
//
// docs/decisions.md ("Sign-in") records the trade-off.
type lockout struct {
	failures *ratelimit.Limiter // per account: wrong passwords, 10 then 1 per minute
	failedIP *ratelimit.Limiter // per account and IP: emptied by a failure, full again after 15 minutes
	unlocks  *ratelimit.Limiter // per account: checked guesses while locked, 3 then 1 per 5 minutes
}

func newLockout(now func() time.Time) *lockout {
	return &lockout{
		failures: ratelimit.New(10, time.Minute, now),
		failedIP: ratelimit.New(1, 15*time.Minute, now),
		unlocks:  ratelimit.New(3, 5*time.Minute, now),
	}
}

// accountKey is the lockout key of an email as typed: its account key
// (IDNA A-label domain), so every spelling of one mailbox shares a bucket.
func accountKey(email string) string { return gatehouse.EmailKey(email) }

// guard runs check, a password check of account from ip, under the lockout.
// A nil lockout (abuse limits off) only runs check.
func (l *lockout) guard(account, ip string, check func() error) error {
	if l == nil {
		return check()
	}
	open, wait := l.failures.Check(account)
	ipKey := account + "\x00" + ip
	if !open {
		if clean, _ := l.failedIP.Check(ipKey); !clean {
			return tooMany(wait)
		}
		if ok, _ := l.unlocks.Allow(account); !ok {
			return tooMany(wait)
		}
	}
	err := check()
	switch {
	case err == nil:
		l.clear(account)
	case errors.Is(err, accounts.ErrWrongPassword):
		l.failures.Allow(account)
		l.failedIP.Allow(ipKey)
		if !open {
			return tooMany(wait)
		}
	}
	return err
}

// clear unlocks account after a sign-in that proved its owner.
func (l *lockout) clear(account string) {
	if l != nil {
		l.failures.Reset(account)
		l.unlocks.Reset(account)
	}
}

// lockout returns the server's lockout; nil when abuse limits are off.
func (s *Server) lockout() *lockout {
	if s.limits == nil {
		return nil
	}
	return s.limits.lockout
}

// login signs in with a password under the lockout (API and /signin page).
func (s *Server) login(r *http.Request, email, password string) (*accounts.SignIn, error) {
	var si *accounts.SignIn
	err := s.lockout().guard(accountKey(email), clientIP(r), func() (err error) {
		si, err = s.svc.Login(r.Context(), email, password, sessionMeta(r))
		return err
	})
	return si, err
}

// magicSignIn consumes a magic link; opening it proves the address, so it
// also unlocks the account (API and hosted page).
func (s *Server) magicSignIn(r *http.Request, secret string) (*accounts.SignIn, error) {
	si, err := s.svc.VerifyMagicLink(r.Context(), secret, sessionMeta(r))
	if err == nil {
		s.lockout().clear(accountKey(si.User.Email))
	}
	return si, err
}

// changePassword changes the caller's password; a wrong current password
// counts against the account like a failed sign-in.
func (s *Server) changePassword(r *http.Request, p *gatehouse.Principal, current, next string) error {
	change := func() error { return s.svc.ChangePassword(r.Context(), p, current, next) }
	l := s.lockout()
	if l == nil {
		return change()
	}
	u, err := s.svc.VerifyUser(r.Context(), p)
	if err != nil {
		return err
	}
	return l.guard(accountKey(u.Email), clientIP(r), change)
}
