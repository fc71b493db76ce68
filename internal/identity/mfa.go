package identity

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
)

// RecoveryCodes is how many single-use recovery codes an account gets.
const RecoveryCodes = 10

var (
	errFactorNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "factor not found")
	errNoFactor       = gatehouse.Errorf(gatehouse.KindConflict, "set up a second factor first")
	errNotPending     = gatehouse.Invalid("this session owes no second factor")
)

// Confirmed is the answer to a confirmed factor: the factor, the recovery
// codes when the account had none (shown once), and a new access token of
// the caller's session, which the confirmation raised to aal2.
type Confirmed struct {
	Factor        Factor
	RecoveryCodes []string
	AccessToken   string
	ExpiresAt     time.Time
}

// ConfirmTOTP confirms the caller's TOTP factor id with a first code. From
// then on the account's sign-ins owe the second factor: the other
// sessions end, and the caller's, which just presented it, is raised to
// aal2. A wrong code is 400 and changes nothing; a sign-in older than
// the reauthentication window is 403, as at the enrolment's start.
func (s *Service) ConfirmTOTP(ctx context.Context, p *gatehouse.Principal, id, code string) (*Confirmed, error) {
	code, err := totpCode(code)
	if err != nil {
		return nil, err
	}
	f, err := s.store.FactorByID(ctx, p.UserID, id)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && f.Kind != FactorTOTP) || !gatehouse.IsID(id) {
		return nil, errFactorNotFound
	}
	if err != nil {
		return nil, internal("find factor", err)
	}
	if f.ConfirmedAt != nil {
		return nil, gatehouse.Errorf(gatehouse.KindConflict, "this factor is already confirmed")
	}
	now := s.Now()
	badCode := gatehouse.Invalid("invalid or already used code")
	out := &Confirmed{Factor: *f}
	err = s.stepTx(ctx, func(tx Store) error {
		// The sign-in must still be recent when the factor counts, not
		// only when the enrolment began (issue 23 item 7).
		if err := s.recentSession(ctx, tx, p, "add a second factor"); err != nil {
			return err
		}
		if err := s.attempt(ctx, tx, p.UserID, now); err != nil {
			return err
		}
		sess, err := ownSession(ctx, tx, p, now)
		if err != nil {
			return refuse(err)
		}
		step, ok, err := s.totpStep(f, code, now)
		if err != nil {
			return err
		}
		if !ok {
			return refuse(badCode)
		}
		out.Factor.LastStep, out.Factor.ConfirmedAt = step, &now
		if err := tx.UseFactorStep(ctx, f.ID, step, &now); errors.Is(err, gatehouse.ErrNotFound) {
			return refuse(badCode)
		} else if err != nil {
			return internal("confirm factor", err)
		}
		if err := tx.ClearMFAAttempts(ctx, p.UserID); err != nil {
			return internal("clear attempts", err)
		}
		if left, err := tx.RecoveryCodesLeft(ctx, p.UserID); err != nil {
			return internal("count recovery codes", err)
		} else if left == 0 {
			if out.RecoveryCodes, err = s.replaceCodes(ctx, tx, p.UserID, now); err != nil {
				return err
			}
		}
		if err := tx.RevokeUserSessions(ctx, p.UserID, p.SessionID, now); err != nil {
			return internal("revoke sessions", err)
		}
		lvl := raised(sess.Level.Level(sess.Via), gatehouse.AMROTP)
		if err := tx.SetSessionLevel(ctx, sess.ID, lvl); err != nil {
			return internal("raise session", err)
		}
		if err := s.auditUser(ctx, tx, p.UserID, "user.factor_added", map[string]any{"factor_id": f.ID, "kind": f.Kind}); err != nil {
			return err
		}
		out.AccessToken, out.ExpiresAt, err = s.reissue(ctx, tx, p, lvl, s.policy.AbsoluteEnd(sess.CreatedAt))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// raised is lvl after a second factor presented by method: aal2, with
// method and mfa among its methods.
func raised(lvl gatehouse.Assurance, method string) gatehouse.Assurance {
	amr := slices.Clone(lvl.AMR)
	for _, m := range []string{method, gatehouse.AMRMFA} {
		if !slices.Contains(amr, m) {
			amr = append(amr, m)
		}
	}
	return gatehouse.Assurance{AAL: gatehouse.AAL2, AMR: amr}
}

// reissue mints an access token of the caller's session at lvl, in the
// workspace of the caller's token, expiring by the session's end.
func (s *Service) reissue(ctx context.Context, st Store, p *gatehouse.Principal, lvl gatehouse.Assurance, end time.Time) (string, time.Time, error) {
	o, role, err := s.ws.OrgAccess(ctx, st, p, p.OrgID)
	if err != nil {
		return "", time.Time{}, err
	}
	oc, err := s.ws.OrgContext(ctx, st, o, role)
	if err != nil {
		return "", time.Time{}, internal("org context", err)
	}
	access, exp, err := s.mintUntil(end, p.UserID, p.SessionID, p.Via, lvl, oc, AccessTTL)
	if err != nil {
		return "", time.Time{}, internal("mint", err)
	}
	return access, exp, nil
}

// auditUser writes an entry about the user's own account in their default
// workspace, as the email confirmation does.
func (s *Service) auditUser(ctx context.Context, st Store, userID, action string, meta map[string]any) error {
	u, err := st.UserByID(ctx, userID)
	if err != nil {
		return internal("find user", err)
	}
	if u.DefaultOrgID == "" {
		return nil
	}
	if err := s.ws.Audit(ctx, st, u.DefaultOrgID, userID, action, "user", userID, meta); err != nil {
		return internal("audit", err)
	}
	if what := userNotices[action]; what != "" {
		return s.notify(ctx, st, userID, what)
	}
	return nil
}

// userNotices are the security notices of auditUser's actions.
var userNotices = map[string]string{
	"user.factor_added":               NoticeFactorAdded,
	"user.factor_removed":             NoticeFactorRemoved,
	"user.recovery_codes_regenerated": NoticeNewCodes,
}

// Factors lists the caller's factors and counts their unused recovery codes.
func (s *Service) Factors(ctx context.Context, p *gatehouse.Principal) ([]Factor, int, error) {
	fs, err := s.store.ListFactors(ctx, p.UserID)
	if err != nil {
		return nil, 0, internal("list factors", err)
	}
	left, err := s.store.RecoveryCodesLeft(ctx, p.UserID)
	if err != nil {
		return nil, 0, internal("count recovery codes", err)
	}
	return fs, left, nil
}

// RemoveFactor removes the caller's factor id. Removing a confirmed one
// ends the account's other sessions; removing the last also voids the
// recovery codes, and sign-ins then owe no second factor.
func (s *Service) RemoveFactor(ctx context.Context, p *gatehouse.Principal, id string) error {
	if !gatehouse.IsID(id) {
		return errFactorNotFound
	}
	now := s.Now()
	return s.store.Tx(ctx, func(tx Store) error {
		if err := s.recentSession(ctx, tx, p, "remove a second factor"); err != nil {
			return err
		}
		f, err := tx.FactorByID(ctx, p.UserID, id)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errFactorNotFound
		}
		if err != nil {
			return internal("find factor", err)
		}
		if err := tx.DeleteFactor(ctx, p.UserID, id); err != nil {
			return internal("delete factor", err)
		}
		if f.ConfirmedAt == nil {
			return nil
		}
		if kinds, err := tx.UserFactors(ctx, p.UserID); err != nil {
			return internal("find factors", err)
		} else if len(kinds) == 0 {
			if err := tx.ReplaceRecoveryCodes(ctx, p.UserID, nil, now); err != nil {
				return internal("void recovery codes", err)
			}
		}
		if err := tx.RevokeUserSessions(ctx, p.UserID, p.SessionID, now); err != nil {
			return internal("revoke sessions", err)
		}
		return s.auditUser(ctx, tx, p.UserID, "user.factor_removed", map[string]any{"factor_id": f.ID, "kind": f.Kind})
	})
}

// NewRecoveryCodes replaces the caller's recovery codes with RecoveryCodes
// new ones, shown once; the old set is void. 409 without a factor.
func (s *Service) NewRecoveryCodes(ctx context.Context, p *gatehouse.Principal) ([]string, error) {
	now := s.Now()
	var codes []string
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := s.recentSession(ctx, tx, p, "replace your recovery codes"); err != nil {
			return err
		}
		if kinds, err := tx.UserFactors(ctx, p.UserID); err != nil {
			return internal("find factors", err)
		} else if len(kinds) == 0 {
			return errNoFactor
		}
		var err error
		if codes, err = s.replaceCodes(ctx, tx, p.UserID, now); err != nil {
			return err
		}
		return s.auditUser(ctx, tx, p.UserID, "user.recovery_codes_regenerated", nil)
	})
	return codes, err
}

// replaceCodes stores a new set of recovery codes for userID, by hash.
func (s *Service) replaceCodes(ctx context.Context, st Store, userID string, now time.Time) ([]string, error) {
	codes := make([]string, RecoveryCodes)
	hashes := make([]string, RecoveryCodes)
	for i := range codes {
		codes[i] = newRecoveryCode()
		hashes[i] = recoveryHash(userID, codes[i])
	}
	if err := st.ReplaceRecoveryCodes(ctx, userID, hashes, now); err != nil {
		return nil, internal("store recovery codes", err)
	}
	return codes, nil
}

// RecoveryCodeBits is the entropy of a recovery code: 24 base32 letters
// and digits of 5 bits each, at least the 112 bits ASVS 5.0 6.5.2 asks of
// a secret stored under a fast hash.
const RecoveryCodeBits = 120

// newRecoveryCode returns RecoveryCodeBits random bits as 24 lowercase
// base32 letters and digits in six groups of four, to type:
// "abcd-efgh-ijkl-mnop-qrst-uvwx".
func newRecoveryCode() string {
	var b [RecoveryCodeBits / 8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	s := strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
	groups := make([]string, 0, len(s)/4)
	for i := 0; i < len(s); i += 4 {
		groups = append(groups, s[i:i+4])
	}
	return strings.Join(groups, "-")
}

// recoveryHash is the stored form of a recovery code of userID: SHA-256
// of the account id and the code as recoveryKey writes it (120 bits of
// entropy make a fast hash right; the id keeps equal codes apart). The
// 80-bit codes given before issue 23 hash the same way, so they keep
// working until used or replaced.
func recoveryHash(userID, code string) string {
	return token.Hash(userID + ":" + recoveryKey(code))
}

// recoveryKey is a typed recovery code without case, hyphens or spaces.
func recoveryKey(code string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r == '-' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, code))
}

// SecondFactor is the second step of a sign-in that owes one: the caller's
// aal1 session presents a TOTP code, a recovery code or a passkey, and is
// replaced by a new session at aal2 (the old one is revoked). A wrong,
// replayed or used code is 401 and changes nothing but the attempt count.
// A code's step is one write transaction: the attempt is counted first
// and, when the step is refused, committed alone (stepTx).
func (s *Service) SecondFactor(ctx context.Context, p *gatehouse.Principal, st Step, meta gatehouse.SessionMeta) (*SignIn, error) {
	si, err := s.secondFactor(ctx, p, st, meta)
	if err != nil {
		s.event(ctx, gatehouse.EventSecondFactorFailure, slog.String("user_id", p.UserID), slog.String("method", st.Method), reason(err))
		if gatehouse.ErrorKind(err) == gatehouse.KindUnauthorized {
			s.auditLater(p.UserID, "user.second_factor_failed", signInMeta(st.Method, "", meta))
		}
		return nil, err
	}
	sid, _ := splitRefresh(si.RefreshToken)
	s.event(ctx, gatehouse.EventSecondFactor, slog.String("user_id", p.UserID), slog.String("method", st.Method), slog.String("session_id", sid))
	return si, nil
}

// secondFactor is SecondFactor without its events.
func (s *Service) secondFactor(ctx context.Context, p *gatehouse.Principal, st Step, meta gatehouse.SessionMeta) (*SignIn, error) {
	if !p.Pending {
		return nil, errNotPending
	}
	f, err := s.factorCheck(ctx, p.UserID, p.SessionID, st)
	if err != nil {
		return nil, err
	}
	var out *SignIn
	err = s.stepTx(ctx, func(tx Store) error {
		now := s.Now()
		if f.count {
			if err := s.attempt(ctx, tx, p.UserID, now); err != nil {
				return err
			}
		}
		sess, err := ownSession(ctx, tx, p, now)
		if err != nil {
			return refuse(err)
		}
		if !sess.Level.Pending {
			return refuse(errNotPending)
		}
		// The factor's first write: when it is refused, nothing but the
		// count was written.
		if err := f.use(tx, now); err != nil {
			return refuse(err)
		}
		// A success clears the attempts, in the step's own commit.
		if err := tx.ClearMFAAttempts(ctx, p.UserID); err != nil {
			return internal("clear attempts", err)
		}
		if ok, err := tx.RevokeSession(ctx, sess.ID, now); err != nil {
			return internal("revoke session", err)
		} else if !ok {
			return errSessionEnded
		}
		u, err := tx.PinUser(ctx, p.UserID)
		if err != nil {
			return errSessionEnded
		}
		oc, err := s.ws.HomeOrg(ctx, tx, u)
		if err != nil {
			return err
		}
		out, err = s.openSession(ctx, tx, u, oc, s.newSession(u.ID, sess.Via, raised(sess.Level.Level(sess.Via), f.amr), meta))
		if err != nil {
			return err
		}
		return s.auditPersonal(ctx, tx, u.ID, "", "user.second_factor_verified", map[string]any{"method": st.Method})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// factorUse is how a step's factor is spent: use checks it (a code) and
// spends it in the step's transaction, failing with errBadCode when it is
// wrong or another use spent it first; count is whether the attempt is
// counted in that transaction (a passkey's was counted before its
// assertion was checked); amr is the factor's method.
type factorUse struct {
	use   func(tx Store, now time.Time) error
	count bool
	amr   string
}

// factorCheck checks the form of the step's factor (a passkey's assertion
// too) for the pending session sid and returns how to spend it.
func (s *Service) factorCheck(ctx context.Context, userID, sid string, st Step) (*factorUse, error) {
	if st.Method == FactorPasskey {
		use, amr, err := s.passkeyStep(ctx, userID, sid, st)
		return &factorUse{use: use, amr: amr}, err
	}
	use, err := s.codeCheck(ctx, userID, st.Method, st.Code)
	amr := gatehouse.AMROTP
	if st.Method == FactorRecoveryCode {
		amr = FactorRecoveryCode
	}
	return &factorUse{use: use, count: true, amr: amr}, err
}

// codeCheck is factorCheck of a TOTP or recovery code: the returned write
// answers in the step's transaction, after the attempt is counted.
func (s *Service) codeCheck(ctx context.Context, userID, method, code string) (func(tx Store, now time.Time) error, error) {
	switch method {
	case FactorTOTP:
		c, err := totpCode(code)
		if err != nil {
			return nil, err
		}
		// The factor is read and the code checked before the step's
		// transaction, outside the single writer's turn; the answer
		// waits for the count, and the conditional write spends the step
		// once.
		f, err := s.store.ConfirmedFactor(ctx, userID, FactorTOTP)
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return nil, internal("find factor", err)
		}
		var step int64
		ok := false
		if err == nil {
			if step, ok, err = s.totpStep(f, c, s.Now()); err != nil {
				return nil, err
			}
		}
		return func(tx Store, _ time.Time) error {
			if !ok {
				return errBadCode
			}
			return spent(tx.UseFactorStep(ctx, f.ID, step, nil))
		}, nil
	case FactorRecoveryCode:
		if strings.TrimSpace(code) == "" || len(code) > 64 {
			return nil, gatehouse.Invalid("code must be a recovery code")
		}
		hash := recoveryHash(userID, code)
		return func(tx Store, now time.Time) error {
			if err := spent(tx.UseRecoveryCode(ctx, userID, hash, now)); err != nil {
				return err
			}
			left, err := tx.RecoveryCodesLeft(ctx, userID)
			if err != nil {
				return internal("count recovery codes", err)
			}
			what, args := recoveryCodeNotice(left)
			return s.notifyf(ctx, tx, userID, what, args...)
		}, nil
	}
	return nil, gatehouse.Invalid("method must be totp, recovery_code or passkey")
}

// spent turns the store's answer to a single-use write into the step's.
func spent(err error) error {
	if errors.Is(err, gatehouse.ErrNotFound) {
		return errBadCode
	}
	if err != nil {
		return internal("use code", err)
	}
	return nil
}

func cmpOr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
