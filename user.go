package gatehouse

import "time"

// User is an account: a person who signs in. The identity module owns
// users; workspaces read them (an inviter's name, a member's address), so
// the row is shared here.
type User struct {
	ID            string
	Email         string // as typed (ParseEmail's display form)
	EmailKey      string // unique; ParseEmail's key
	Name          string
	AvatarURL     string
	PasswordHash  string
	EmailVerified bool
	DefaultOrgID  string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// DisabledAt is when an operator disabled the account (gatehouse users
	// disable); nil: it may sign in.
	DisabledAt *time.Time
	// Language is the person's language for pages and mail ("en", "de");
	// "" follows the browser's Accept-Language.
	Language string
}
