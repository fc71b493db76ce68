package identity

import (
	"errors"

	"github.com/gatehouse/gatehouse"
)

// ErrWrongPassword is the cause of every answer to a failed password check:
// a sign-in with a bad email or password, and a wrong current password on a
// change. The edge counts these for its per-account lockout.
var ErrWrongPassword = errors.New("wrong password")

var (
	errBadCredentials = &gatehouse.Error{Kind: gatehouse.KindUnauthorized, Message: "invalid email or password", Err: ErrWrongPassword}
	// errDisabled refuses a sign-in that proved a credential (a link, a
	// passkey, an SSO assertion, a grant) of a disabled account; a password
	// sign-in answers errBadCredentials instead.
	errDisabled     = gatehouse.Errorf(gatehouse.KindUnauthorized, "this account is disabled")
	errWrongCurrent = &gatehouse.Error{Kind: gatehouse.KindForbidden, Message: "current password is wrong", Err: ErrWrongPassword, Field: "current_password"}
)
