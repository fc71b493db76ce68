package sqlstore

import (
	"context"

	"github.com/gatehouse/gatehouse/internal/sso"
)

// SocialUser implements sso.Store.
func (s *SSO) SocialUser(ctx context.Context, provider, subject string) (string, error) {
	var userID string
	err := s.r().QueryRowContext(ctx, `SELECT user_id FROM social_identities WHERE provider = $1 AND subject = $2`, provider, subject).Scan(&userID)
	return userID, s.one(err)
}

// LinkSocial implements sso.Store: the unique index of (provider,
// subject) refuses a second link of one upstream identity.
func (s *SSO) LinkSocial(ctx context.Context, i *sso.Linked) error {
	return inserted(s.w().ExecContext(ctx, `INSERT INTO social_identities (id, provider, subject, user_id, email, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT DO NOTHING`, i.ID, i.Provider, i.Subject, i.UserID, i.Email, micros(i.CreatedAt)))
}

// UserIdentities implements sso.Store: the social identities, then the
// links to workspaces' connections (one entry per connection).
func (s *SSO) UserIdentities(ctx context.Context, userID string) ([]sso.Linked, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, 'social', provider, email, created_at FROM social_identities WHERE user_id = $1
		UNION ALL SELECT c.id, 'sso', c.name, '', MIN(l.created_at) FROM sso_links l JOIN sso_connections c ON c.id = l.connection_id
		WHERE l.user_id = $1 GROUP BY c.id, c.name
		ORDER BY 5, 1`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []sso.Linked{}
	for rows.Next() {
		var i sso.Linked
		var at int64
		if err := rows.Scan(&i.ID, &i.Kind, &i.Provider, &i.Email, &at); err != nil {
			return nil, err
		}
		i.UserID, i.CreatedAt = userID, fromMicros(at)
		out = append(out, i)
	}
	return out, rows.Err()
}

// Unlink implements sso.Store: a social identity by its id, or every
// link of the user to the connection of that id.
func (s *SSO) Unlink(ctx context.Context, userID, id string) error {
	n, err := changed(s.w().ExecContext(ctx, `DELETE FROM social_identities WHERE id = $1 AND user_id = $2`, id, userID))
	if err != nil || n > 0 {
		return err
	}
	return affected(s.w().ExecContext(ctx, `DELETE FROM sso_links WHERE connection_id = $1 AND user_id = $2`, id, userID))
}

// DeleteUserIdentities implements identity.Store: a claim of the mailbox
// takes away the upstream identities a registrant could have linked.
func (s *Identity) DeleteUserIdentities(ctx context.Context, userID string) (int, error) {
	n, err := changed(s.w().ExecContext(ctx, `DELETE FROM social_identities WHERE user_id = $1`, userID))
	if err != nil {
		return 0, err
	}
	m, err := changed(s.w().ExecContext(ctx, `DELETE FROM sso_links WHERE user_id = $1`, userID))
	return n + m, err
}
