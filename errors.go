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
// internal cause that is logged but never shown.
type Error struct {
	Kind       Kind
	Message    string
	Err        error
	RetryAfter time.Duration // for KindTooMany and KindUnavailable
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
