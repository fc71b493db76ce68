package identity

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
)

// LinkState is what became of a mailed link (issue 30 item 9), so a page
// can say why a link no longer works before anyone types into its form.
type LinkState int

// The states of a mailed link. A link spent by a newer one is LinkUsed.
const (
	LinkUnknown LinkState = iota
	LinkUsable
	LinkUsed
	LinkExpired
)

// MailedLink is the state of the link secret of purpose (PurposeVerifyEmail,
// PurposePasswordReset) and whether the address it was sent to is now the
// account's, confirmed. It reads only: the holder of a link learns nothing
// the link did not carry.
func (s *Service) MailedLink(ctx context.Context, secret, purpose string) (state LinkState, confirmed bool, err error) {
	if secret == "" {
		return LinkUnknown, false, nil
	}
	t, err := s.store.EmailTokenAny(ctx, token.Hash(secret), purpose)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return LinkUnknown, false, nil
	}
	if err != nil {
		return LinkUnknown, false, internal("read mailed link", err)
	}
	if t.UserID != "" {
		if u, err := s.store.UserByID(ctx, t.UserID); err == nil {
			confirmed = u.Email == t.Email && u.EmailVerified
		}
	}
	switch {
	case t.UsedAt != nil:
		return LinkUsed, confirmed, nil
	case !s.Now().Before(t.ExpiresAt):
		return LinkExpired, confirmed, nil
	}
	return LinkUsable, confirmed, nil
}
