package identity

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"image/png"
	"log/slog"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/gatehouse/gatehouse"
)

// TOTP parameters (RFC 6238 as authenticator apps read them): six digits,
// 30-second steps, HMAC-SHA1, one step of skew either way.
const (
	TOTPPeriod = 30
	TOTPSkew   = 1
	totpIssuer = "Gatehouse"
)

// Second-factor attempts per account (docs/decisions.md): MFAAttempts in a
// window of MFALockout, then 429 until the window ends; a success clears.
const (
	MFAAttempts = 5
	MFALockout  = 15 * time.Minute
	// MFAPendingTTL is how long a session owing its second factor lives:
	// the time to take the step, which refreshing does not extend.
	MFAPendingTTL = 15 * time.Minute
)

// sessionTTL is the life of a new session (and its first refresh token)
// at level lvl.
func sessionTTL(lvl gatehouse.Assurance) time.Duration {
	if lvl.Pending {
		return MFAPendingTTL
	}
	return RefreshTTL
}

var totpOpts = totp.ValidateOpts{Period: TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// Enrolment is a TOTP factor begun and not yet confirmed: what the
// authenticator app needs, shown once.
type Enrolment struct {
	Factor Factor
	Secret string // base32, for typing into the app
	URI    string // otpauth://
	QRCode string // PNG of URI, as a data: URL
}

// errTOTPTaken answers an enrolment of an account whose TOTP factor is
// set up, or being confirmed at the same moment.
var errTOTPTaken = gatehouse.Errorf(gatehouse.KindConflict, "a TOTP factor is already set up; remove it before adding another")

// EnrolTOTP begins a TOTP factor for the caller: a new secret, sealed at
// rest, that counts only once confirmed with a first code. A factor begun
// before and never confirmed is dropped; an account has one TOTP factor
// (409 while one is confirmed), however many enrolments run at once.
func (s *Service) EnrolTOTP(ctx context.Context, p *gatehouse.Principal) (*Enrolment, error) {
	if err := s.RequireRecentAuth(ctx, p, "add a second factor"); err != nil {
		return nil, err
	}
	u, err := s.store.UserByID(ctx, p.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errSessionEnded
	}
	if err != nil {
		return nil, internal("find user", err)
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: totpIssuer, AccountName: u.Email, Period: TOTPPeriod,
		SecretSize: 20, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return nil, internal("generate totp secret", err)
	}
	qr, err := qrDataURL(key)
	if err != nil {
		return nil, internal("draw qr code", err)
	}
	now := s.Now()
	f := Factor{ID: gatehouse.NewID(), UserID: u.ID, Kind: FactorTOTP, CreatedAt: now}
	f.Secret = base64.StdEncoding.EncodeToString(s.totp.Seal([]byte(key.Secret()), []byte(f.ID)))
	err = s.store.Tx(ctx, func(tx Store) error {
		// The account's row lock orders concurrent enrolments, on every
		// instance: each sees the one before it and replaces its pending
		// factor (or meets its confirmed one), and the unique index on
		// (user_id) of TOTP factors answers what slips past as 409.
		if err := tx.LockUser(ctx, u.ID); errors.Is(err, gatehouse.ErrNotFound) {
			return errSessionEnded
		} else if err != nil {
			return internal("lock user", err)
		}
		if _, err := tx.ConfirmedFactor(ctx, u.ID, FactorTOTP); err == nil {
			return errTOTPTaken
		} else if !errors.Is(err, gatehouse.ErrNotFound) {
			return internal("find factor", err)
		}
		if err := liveSession(ctx, tx, p, now); err != nil {
			return err
		}
		if err := tx.DeleteUnconfirmedFactors(ctx, u.ID); err != nil {
			return internal("drop unconfirmed factors", err)
		}
		if err := tx.CreateFactor(ctx, &f); errors.Is(err, gatehouse.ErrConflict) {
			return errTOTPTaken
		} else if err != nil {
			return internal("create factor", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Enrolment{Factor: f, Secret: key.Secret(), URI: key.URL(), QRCode: qr}, nil
}

// TOTPSetup is what an authenticator app needs of uri, an otpauth URI
// that EnrolTOTP gave: the secret and the QR code (a PNG data: URL), so a
// page can show an enrolment again after a wrong first code. A URI that
// is not a TOTP one of this issuer is refused.
func TOTPSetup(uri string) (secret, qr string, err error) {
	key, err := otp.NewKeyFromURL(uri)
	if err != nil || key.Type() != "totp" || key.Issuer() != totpIssuer || key.Secret() == "" ||
		strings.Trim(key.Secret(), "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
		return "", "", gatehouse.Invalid("not an enrolment of this service")
	}
	if qr, err = qrDataURL(key); err != nil {
		return "", "", internal("draw qr code", err)
	}
	return key.Secret(), qr, nil
}

func qrDataURL(key *otp.Key) (string, error) {
	img, err := key.Image(240, 240)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return "", err
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// errBadCode answers a code that is wrong, already used, or for no factor.
var errBadCode = gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid or already used code")

// totpCode checks the form of a typed TOTP code: six digits, spaces allowed.
func totpCode(code string) (string, error) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		return "", gatehouse.Invalid("code must be 6 digits")
	}
	return code, nil
}

// totpStep returns the time step, within the skew of now and after the
// factor's last accepted step, whose code is code; false when none is.
func (s *Service) totpStep(f *Factor, code string, now time.Time) (int64, bool, error) {
	sealed, err := base64.StdEncoding.DecodeString(f.Secret)
	if err != nil {
		return 0, false, internal("decode totp secret", err)
	}
	secret, err := s.totp.Open(sealed, []byte(f.ID))
	if err != nil {
		return 0, false, internal("open totp secret", err)
	}
	cur := now.Unix() / TOTPPeriod
	for step := cur - TOTPSkew; step <= cur+TOTPSkew; step++ {
		want, err := totp.GenerateCodeCustom(string(secret), time.Unix(step*TOTPPeriod, 0), totpOpts)
		if err != nil {
			return 0, false, internal("totp code", err)
		}
		if step > f.LastStep && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step, true, nil
		}
	}
	return 0, false, nil
}

// attempt counts a second-factor attempt of userID in st, the step's
// transaction, which stepTx commits even when the step is then refused:
// a refusal (429 with the rest of the window) once MFAAttempts were made
// in it. The count is one upsert, so concurrent attempts are all counted.
func (s *Service) attempt(ctx context.Context, st Store, userID string, now time.Time) error {
	n, start, err := st.MFAAttempt(ctx, userID, now, now.Add(-MFALockout))
	if err != nil {
		return internal("count attempt", err)
	}
	if n > MFAAttempts {
		if n == MFAAttempts+1 {
			// The first refused attempt of the window locks the factor:
			// recorded once (the later ones are only rate-limited).
			if err := s.auditPersonal(ctx, st, userID, "", "user.locked_out", map[string]any{"reason": reasonSecondFactor}); err != nil {
				return err
			}
			s.event(ctx, gatehouse.EventLockout, slog.String("user_id", userID), slog.String("reason", reasonSecondFactor))
		}
		return refuse(gatehouse.TooMany(start.Add(MFALockout).Sub(now)))
	}
	return nil
}

// refusal is an answer of a step's transaction that is owed to the caller
// after the transaction commits what it wrote before it: the attempt's
// count, alone.
type refusal struct{ error }

// refuse marks err, when it is a refusal of the caller (not an internal
// error, after which nothing is committed), as the answer of a step's
// transaction that still commits.
func refuse(err error) error {
	if gatehouse.ErrorKind(err) == gatehouse.KindInternal {
		return err
	}
	return refusal{err}
}

// stepTx runs fn in one transaction that commits when fn returns nil or a
// refusal, and returns the refusal once committed.
func (s *Service) stepTx(ctx context.Context, fn func(tx Store) error) error {
	var refused error
	err := s.store.Tx(ctx, func(tx Store) error {
		refused = nil
		var r refusal
		if err := fn(tx); errors.As(err, &r) {
			refused = r.error
		} else if err != nil {
			return err
		}
		return nil
	})
	return cmpOr(err, refused)
}
