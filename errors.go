package gatehouse

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error for the edge that answers it; web/errors.go alone
// maps kinds to HTTP statuses.
type Kind int

// The error kinds.
const (
	KindInternal Kind = iota
	KindInvalid
	KindUnauthorized
	KindForbidden
	KindNotFound
	KindConflict
	KindGone
	KindTooMany
	KindUnavailable
)

// Error is a domain error: a kind, a message safe to show a client, and an
// internal cause that is logged but never shown. Code and Field let the
// edges (pages, OAuth, SCIM) tell errors apart without reading the message:
// Code is a stable machine code ("reauth_required"), Field the input field
// the error is about ("email", "new_password"). Neither is written in the
// API's JSON body, which stays {"error": message}.
type Error struct {
	Kind       Kind
	Message    string
	Err        error
	RetryAfter time.Duration // for KindTooMany and KindUnavailable
	Code       string
	Field      string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of kind k whose safe message is formatted.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a 400-class error with message msg.
func Invalid(format string, args ...any) *Error { return Errorf(KindInvalid, format, args...) }

// InvalidField returns a 400-class error about the input field field.
func InvalidField(field, format string, args ...any) *Error {
	return Invalid(format, args...).WithField(field)
}

// WithCode returns a copy of e with the machine code code (a copy, so a
// shared sentinel error is never changed).
func (e *Error) WithCode(code string) *Error {
	c := *e
	c.Code = code
	return &c
}

// WithField returns a copy of e about the input field field.
func (e *Error) WithField(field string) *Error {
	c := *e
	c.Field = field
	return &c
}

// ErrorCode reports the code of the *Error err wraps, "" if none.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// ErrorField reports the input field of the *Error err wraps, "" if none.
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// ErrorKind reports the kind of err: KindInternal unless err wraps an *Error.
func ErrorKind(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Internal wraps an unexpected error of an operation with context, so it
// answers 500; an *Error passes through unchanged, keeping its kind.
func Internal(what string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Store-level sentinels: the store translates driver errors into these.
var (
	// ErrNotFound means the row does not exist (or is not live).
	ErrNotFound = errors.New("not found")
	// ErrConflict means a uniqueness constraint refused the write.
	ErrConflict = errors.New("conflict")
)

// TooMany is the error of a request over an abuse limit: 429 with
// Retry-After wait.
func TooMany(wait time.Duration) *Error {
	return &Error{Kind: KindTooMany, Message: "too many requests; try again later", RetryAfter: wait}
}

// The error codes the edges match on.
const (
	// CodeReauthRequired: the change needs a recent sign-in; a page offers
	// to sign in again and come back.
	CodeReauthRequired = "reauth_required"
)
