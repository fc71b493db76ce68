package identity

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// lockout bounds password guesses per account. It is the one limit behind
// every password check (Login: POST /v1/auth/login and the /signin page;
// ChangePassword: POST /v1/me/password); the account is the email's
// account key, so every spelling of one mailbox fills one bucket.
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
// docs/decisions.md ("Sign-in") records the trade-off. A nil lockout
// (Config.NoLockout) only runs the checks.
type lockout struct {
	failures *ratelimit.Limiter // per account: wrong passwords, 10 then 1 per minute
	failedIP *ratelimit.Limiter // per account and IP: emptied by a failure, full again after 15 minutes
	unlocks  *ratelimit.Limiter // per account: checked guesses while locked, 3 then 1 per 5 minutes
}

func newLockout(now func() time.Time, limits *ratelimit.Shared) *lockout {
	return &lockout{
		failures: limits.New("lockoutFailures", 10, time.Minute, now),
		failedIP: limits.New("lockoutFailedIP", 1, 15*time.Minute, now),
		unlocks:  limits.New("lockoutUnlocks", 3, 5*time.Minute, now),
	}
}

// guard runs check, a password check of the account with key account from
// ip, under the lockout; locked reports that this refusal locked the
// account (its last free guess was spent).
func (l *lockout) guard(account, ip string, check func() error) (locked bool, err error) {
	if l == nil {
		return false, check()
	}
	open, wait := l.failures.Check(account)
	ipKey := account + "\x00" + ip
	if !open {
		if clean, _ := l.failedIP.Check(ipKey); !clean {
			return false, gatehouse.TooMany(wait)
		}
		if ok, _ := l.unlocks.Allow(account); !ok {
			return false, gatehouse.TooMany(wait)
		}
	}
	err = check()
	switch {
	case err == nil:
		l.clear(account)
	case errors.Is(err, ErrWrongPassword):
		l.failures.Allow(account)
		l.failedIP.Allow(ipKey)
		if !open {
			return false, gatehouse.TooMany(wait)
		}
		if still, _ := l.failures.Check(account); !still {
			return true, err
		}
	}
	return false, err
}

// clear unlocks account after a sign-in that proved its owner.
func (l *lockout) clear(account string) {
	if l != nil {
		l.failures.Reset(account)
		l.unlocks.Reset(account)
	}
}

// Login signs in with email and password under the lockout. Unknown email
// and wrong password give the same error after the same work.
//
// Each outcome is a security event; a refused password of a known account
// and the lock it causes are also entries of the account's personal
// workspace audit log, written after the answer (auditLater), so they
// take no time a stranger could measure. The lockout bounds how many a
// guesser writes: ten a minute and then one a minute per account.
func (s *Service) Login(ctx context.Context, email, pw string, meta gatehouse.SessionMeta) (*SignIn, error) {
	var si *SignIn
	var userID string
	locked, err := s.lockout.guard(gatehouse.EmailKey(email), meta.IP, func() (err error) {
		si, userID, err = s.login(ctx, email, pw, meta)
		return err
	})
	s.signInOutcome(ctx, MethodPassword, si, userID, err)
	if userID != "" && errors.Is(err, ErrWrongPassword) {
		s.auditLater(userID, "user.signin_failed", signInMeta(MethodPassword, "", meta))
	}
	if locked {
		attrs := []slog.Attr{slog.String("reason", MethodPassword)}
		if userID != "" {
			attrs = append(attrs, slog.String("user_id", userID))
			s.auditLater(userID, "user.locked_out", map[string]any{"reason": MethodPassword, "ip": meta.IP})
		}
		s.event(ctx, gatehouse.EventLockout, attrs...)
	}
	return si, err
}

// VerifyMagicLink consumes a magic-link token and signs its address in,
// creating the account (email verified, no password) if it has none.
// Opening the link proves the address, so it also unlocks the account.
func (s *Service) VerifyMagicLink(ctx context.Context, secret string, meta gatehouse.SessionMeta) (*SignIn, error) {
	si, err := s.verifyMagicLink(ctx, secret, meta)
	if err == nil {
		s.lockout.clear(gatehouse.EmailKey(si.User.Email))
	}
	s.signInOutcome(ctx, MethodMagicLink, si, "", err)
	return si, err
}

// ChangePassword sets a new password. The current one is required when the
// account has one (a magic-link account may set its first without it), and
// a wrong one counts against the account like a failed sign-in from
// meta.IP. Every other session of the account is revoked; its personal
// API keys only when ch asks.
func (s *Service) ChangePassword(ctx context.Context, p *gatehouse.Principal, ch PasswordChange, meta gatehouse.SessionMeta) error {
	change := func() error { return s.changePassword(ctx, p, ch) }
	if s.lockout == nil {
		return change()
	}
	u, err := s.VerifyUser(ctx, p)
	if err != nil {
		return err
	}
	locked, err := s.lockout.guard(gatehouse.EmailKey(u.Email), meta.IP, change)
	if locked {
		s.event(ctx, gatehouse.EventLockout, slog.String("user_id", u.ID), slog.String("reason", MethodPassword))
		s.auditLater(u.ID, "user.locked_out", map[string]any{"reason": MethodPassword, "ip": meta.IP})
	}
	return err
}
