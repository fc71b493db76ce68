package gatehouse

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorCodeAndField(t *testing.T) {
	base := Errorf(KindForbidden, "sign in again")
	coded := base.WithCode(CodeReauthRequired)
	if base.Code != "" {
		t.Fatalf("WithCode changed its receiver: %q", base.Code)
	}
	wrapped := fmt.Errorf("outer: %w", coded)
	if got := ErrorCode(wrapped); got != CodeReauthRequired {
		t.Fatalf("ErrorCode through a wrap = %q", got)
	}
	if got := ErrorKind(wrapped); got != KindForbidden {
		t.Fatalf("ErrorKind = %v", got)
	}
	if wrapped.Error() != "outer: sign in again" {
		t.Fatalf("message changed: %q", wrapped.Error())
	}

	f := InvalidField("new_password", "%s is too common", "new_password")
	if f.Kind != KindInvalid || f.Message != "new_password is too common" {
		t.Fatalf("InvalidField = %+v", f)
	}
	if got := ErrorField(fmt.Errorf("x: %w", f)); got != "new_password" {
		t.Fatalf("ErrorField = %q", got)
	}
	if got := ErrorField(f.WithCode("c")); got != "new_password" {
		t.Fatalf("WithCode lost the field: %q", got)
	}
	if got := ErrorCode(f.WithField("other").WithCode("c")); got != "c" {
		t.Fatalf("chained code = %q", got)
	}

	plain := errors.New("boom")
	if ErrorCode(plain) != "" || ErrorField(plain) != "" || ErrorCode(nil) != "" || ErrorField(nil) != "" {
		t.Fatal("a plain or nil error has a code or field")
	}

	// The shared helpers name their field.
	if _, _, err := ParseEmail("not an address"); ErrorField(err) != "email" {
		t.Fatalf("ParseEmail's field = %q (%v)", ErrorField(err), err)
	}
	if err := CheckOneLine("name", "a\nb"); ErrorField(err) != "name" {
		t.Fatalf("CheckOneLine's field = %q (%v)", ErrorField(err), err)
	}
}
