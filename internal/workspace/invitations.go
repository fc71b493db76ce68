package workspace

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/token"

	"golang.org/x/text/language"
)

// InvitationTTL is the life of an email invitation (spec §8). Link
// invitations do not expire.
const InvitationTTL = 14 * 24 * time.Hour

// MaxInviteEmails bounds one request's email list.
const MaxInviteEmails = 100

var (
	errInvitationNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "invitation not found")
	errInvitationRevoked  = gatehouse.Errorf(gatehouse.KindGone, "this invitation was revoked")
	errInvitationExpired  = gatehouse.Errorf(gatehouse.KindGone, "this invitation has expired")
	errInvitationUsed     = gatehouse.Errorf(gatehouse.KindGone, "this invitation has already been used")
	errInvitationOrgGone  = gatehouse.Errorf(gatehouse.KindGone, "the organization of this invitation was deleted")
)

// InviteInput is the body of POST /v1/orgs/{id}/invitations.
type InviteInput struct {
	Kind   string   // email (default) or link
	Emails []string // email kind
	Role   string   // member (default) or admin; link invitations are always member
}

// Invite creates invitations to a team org: one per valid, distinct address
// for the email kind (each mailed its link), or one link invitation. Invalid
// addresses are returned as given; when none is valid the answer is 400.
// Each invitation carries its URL, which cannot be recovered later.
func (s *Service) Invite(ctx context.Context, p *gatehouse.Principal, orgID string, in InviteInput) (invs []*Invitation, invalid []string, err error) {
	var org *Org
	var inviter *gatehouse.User
	err = s.store.Tx(ctx, func(tx Store) error {
		invs, invalid = nil, nil // a transaction PostgreSQL runs again (a deadlock victim) starts over
		a, err := s.authorize(ctx, tx, p, orgID, PermMembers, true)
		if err != nil {
			return err
		}
		org = a.org
		kind, role := in.Kind, in.Role
		if kind == "" {
			kind = InviteEmail
		}
		if kind != InviteEmail && kind != InviteLink {
			return gatehouse.Invalid("kind must be email or link")
		}
		if role == "" {
			role = RoleMember
		}
		if role != RoleMember && role != RoleAdmin {
			return gatehouse.InvalidField("role", "role must be member or admin")
		}
		emails := []string{""}
		if kind == InviteLink {
			role = RoleMember
		} else {
			if emails, invalid, err = inviteEmails(in.Emails); err != nil {
				return err
			}
		}
		if inviter, err = tx.UserByID(ctx, p.UserID); err != nil {
			return gatehouse.Internal("find inviter", err)
		}
		now := s.Now()
		pending := map[string]*Invitation{}
		if kind == InviteEmail {
			if err := refuseMembers(ctx, tx, orgID, emails); err != nil {
				return err
			}
			if err := s.inviteMailRoom(ctx, tx, inviter, orgID, len(emails)); err != nil {
				return err
			}
			usable, err := tx.UsableInvitations(ctx, orgID, now)
			if err != nil {
				return gatehouse.Internal("list invitations", err)
			}
			for _, inv := range usable {
				if inv.Kind == InviteEmail {
					pending[inv.Email] = inv
				}
			}
		}
		for _, email := range emails {
			// Inviting a pending address again renews its invitation:
			// the earlier link stops working and one invitation stays.
			if old := pending[email]; old != nil {
				if err := tx.RevokeInvitation(ctx, orgID, old.ID, now); err != nil {
					return gatehouse.Internal("renew invitation", err)
				}
			}
			secret := token.NewSecret("")
			inv := &Invitation{ID: gatehouse.NewID(), OrgID: orgID, Kind: kind, Role: role, Email: email, TokenHash: token.Hash(secret),
				InviterID: p.UserID, Inviter: inviter.Name, CreatedAt: now, URL: s.inviteURL(secret)}
			mailed := ""
			if kind == InviteEmail {
				exp := now.Add(InvitationTTL)
				inv.ExpiresAt = &exp
				mailed = s.mailSecret(inv)
			}
			if err := tx.CreateInvitation(ctx, inv); err != nil {
				return gatehouse.Internal("create invitation", err)
			}
			if kind == InviteEmail {
				if err := tx.QueueMail(ctx, s.invitationMail(inviteeLanguage(ctx, tx, inv.Email), inv, mailed, org, inviter)); err != nil {
					return gatehouse.Internal("queue invitation mail", err)
				}
			}
			meta := map[string]any{"kind": kind, "role": role}
			if email != "" {
				meta["email"] = email
			}
			if old := pending[email]; old != nil {
				meta["renews"] = old.ID
			}
			if err := s.Audit(ctx, tx, orgID, p.UserID, "invitation.created", "invitation", inv.ID, meta); err != nil {
				return gatehouse.Internal("audit", err)
			}
			invs = append(invs, inv)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return invs, invalid, nil
}

// refuseMembers refuses an email invitation to an address that is a
// member of the org already (409, naming the addresses).
func refuseMembers(ctx context.Context, tx Tables, orgID string, emails []string) error {
	var members []string
	for _, email := range emails {
		_, err := tx.MemberByEmail(ctx, orgID, email)
		switch {
		case err == nil:
			members = append(members, email)
		case !errors.Is(err, gatehouse.ErrNotFound):
			return gatehouse.Internal("member by email", err)
		}
	}
	switch len(members) {
	case 0:
		return nil
	case 1:
		return gatehouse.Errorf(gatehouse.KindConflict, "%s is already a member of this workspace", members[0]).WithField("emails")
	}
	return gatehouse.Errorf(gatehouse.KindConflict, "already members of this workspace: %s", strings.Join(members, ", ")).WithField("emails")
}

// ResendInvitation mails a pending email invitation again, counted by the
// invitation mail limits: its links are new ones (the secrets are stored
// hashed, so the old ones cannot be sent again) and the old links stop
// working. It returns the renewed invitation, with its URL.
func (s *Service) ResendInvitation(ctx context.Context, p *gatehouse.Principal, orgID, invitationID string) (*Invitation, error) {
	var out *Invitation
	err := s.store.Tx(ctx, func(tx Store) error {
		a, err := s.authorize(ctx, tx, p, orgID, PermMembers, true)
		if err != nil {
			return err
		}
		now := s.Now()
		usable, err := tx.UsableInvitations(ctx, orgID, now)
		if err != nil {
			return gatehouse.Internal("list invitations", err)
		}
		var old *Invitation
		for _, inv := range usable {
			if inv.ID == invitationID && inv.Kind == InviteEmail {
				old = inv
			}
		}
		if old == nil {
			return errInvitationNotFound
		}
		inviter, err := tx.UserByID(ctx, p.UserID)
		if err != nil {
			return gatehouse.Internal("find inviter", err)
		}
		if err := s.inviteMailRoom(ctx, tx, inviter, orgID, 1); err != nil {
			return err
		}
		if err := tx.RevokeInvitation(ctx, orgID, old.ID, now); err != nil {
			return gatehouse.Internal("renew invitation", err)
		}
		secret := token.NewSecret("")
		exp := now.Add(InvitationTTL)
		inv := &Invitation{ID: gatehouse.NewID(), OrgID: orgID, Kind: InviteEmail, Role: old.Role, Email: old.Email, TokenHash: token.Hash(secret),
			InviterID: p.UserID, Inviter: inviter.Name, CreatedAt: now, ExpiresAt: &exp, URL: s.inviteURL(secret)}
		mailed := s.mailSecret(inv)
		if err := tx.CreateInvitation(ctx, inv); err != nil {
			return gatehouse.Internal("create invitation", err)
		}
		if err := tx.QueueMail(ctx, s.invitationMail(inviteeLanguage(ctx, tx, inv.Email), inv, mailed, a.org, inviter)); err != nil {
			return gatehouse.Internal("queue invitation mail", err)
		}
		if err := s.Audit(ctx, tx, orgID, p.UserID, "invitation.resent", "invitation", inv.ID, map[string]any{"email": inv.Email, "renews": old.ID}); err != nil {
			return gatehouse.Internal("audit", err)
		}
		out = inv
		return nil
	})
	return out, err
}

// inviteEmails normalizes raw and de-duplicates it by key; addresses that are not
// valid come back in invalid, as given (trimmed).
func inviteEmails(raw []string) (valid, invalid []string, err error) {
	if len(raw) == 0 {
		return nil, nil, gatehouse.InvalidField("emails", "emails is required for email invitations")
	}
	if len(raw) > MaxInviteEmails {
		return nil, nil, gatehouse.Invalid("at most %d emails per request", MaxInviteEmails)
	}
	seen := map[string]bool{}
	for _, r := range raw {
		key, e, err := gatehouse.ParseEmail(r)
		if err != nil {
			invalid = append(invalid, strings.TrimSpace(r))
			continue
		}
		if !seen[key] {
			seen[key] = true
			valid = append(valid, e)
		}
	}
	if len(valid) == 0 {
		return nil, nil, gatehouse.Invalid("no valid email address among: %s", strings.Join(invalid, ", "))
	}
	return valid, invalid, nil
}

func (s *Service) inviteURL(secret string) string {
	return s.webURL + "/invite?token=" + url.QueryEscape(secret)
}

// mailSecret gives email invitation inv its second secret and returns the
// link that carries it, for the invitee's mail only. The inviter gets
// inv.URL, which accepts too but proves nothing about the address;
// accepting with this one confirms it (confirmByMail).
func (s *Service) mailSecret(inv *Invitation) string {
	secret := token.NewSecret("")
	inv.MailTokenHash = token.Hash(secret)
	return s.inviteURL(secret)
}

// invitationMail is the message of an email invitation, in lang
// (inviteeLanguage), carrying link (mailSecret).
func (s *Service) invitationMail(lang language.Tag, inv *Invitation, link string, org *Org, inviter *gatehouse.User) mail.Message {
	who := inviter.Name
	if who == "" {
		who = inviter.Email
	}
	return mail.Message{To: inv.Email, Subject: i18n.Tf(lang, "You are invited to join %s on %s", org.Name, s.brand.Product()),
		Text: i18n.Tf(lang, "%[1]s invited you to join the organization %[2]s on %[3]s as %[4]s.\n\n"+
			"Open this link to accept:\n\n%[5]s\n\n"+
			"The link works once, for this address, and expires in 14 days. If you did not expect it, ignore this message.\n",
			who, org.Name, s.brand.Product(), i18n.Term(lang, inv.Role), link)}
}

// inviteeLanguage is the language of an invitation's mail to email: the
// invitee's preference when the address has an account, else the
// language of the request that sent it (the inviter's page, or the API
// request's Accept-Language), else English.
func inviteeLanguage(ctx context.Context, tx Tables, email string) language.Tag {
	code := ""
	if u, err := tx.UserByEmail(ctx, gatehouse.EmailKey(email)); err == nil {
		code = u.Language
	}
	return i18n.For(ctx, code)
}

// Invitations lists org orgID's usable invitations, newest first, without
// secrets.
func (s *Service) Invitations(ctx context.Context, p *gatehouse.Principal, orgID string) ([]*Invitation, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, PermMembers, false); err != nil {
		return nil, err
	}
	invs, err := s.store.UsableInvitations(ctx, orgID, s.Now())
	if err != nil {
		return nil, gatehouse.Internal("list invitations", err)
	}
	return invs, nil
}

// RevokeInvitation revokes an invitation of org orgID; preview and accept
// then answer 410. Unknown or already revoked answers 404.
func (s *Service) RevokeInvitation(ctx context.Context, p *gatehouse.Principal, orgID, invitationID string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.authorize(ctx, tx, p, orgID, PermMembers, false); err != nil {
			return err
		}
		if !gatehouse.IsID(invitationID) {
			return errInvitationNotFound
		}
		if err := tx.RevokeInvitation(ctx, orgID, invitationID, s.Now()); err != nil {
			if errors.Is(err, gatehouse.ErrNotFound) {
				return errInvitationNotFound
			}
			return gatehouse.Internal("revoke invitation", err)
		}
		if err := s.Audit(ctx, tx, orgID, p.UserID, "invitation.revoked", "invitation", invitationID, nil); err != nil {
			return gatehouse.Internal("audit", err)
		}
		return nil
	})
}

// usableInvitation finds the invitation of secret and its org: 404 when the
// secret is unknown, 410 when the org is deleted or the invitation revoked,
// expired or (email kind) used.
func (s *Service) usableInvitation(ctx context.Context, st Tables, secret string) (*Invitation, *Org, error) {
	if secret == "" {
		return nil, nil, errInvitationNotFound
	}
	inv, err := st.InvitationByHash(ctx, token.Hash(secret))
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil, errInvitationNotFound
	}
	if err != nil {
		return nil, nil, gatehouse.Internal("find invitation", err)
	}
	o, err := st.OrgByID(ctx, inv.OrgID)
	if err != nil {
		return nil, nil, gatehouse.Internal("find org", err)
	}
	if err := s.gone(inv, o, true); err != nil {
		return nil, nil, err
	}
	return inv, o, nil
}

// gone answers 410 for an invitation that cannot be accepted; used counts
// only when checkUsed is set.
func (s *Service) gone(inv *Invitation, o *Org, checkUsed bool) error {
	switch {
	case o.DeletedAt != nil:
		return errInvitationOrgGone
	case inv.RevokedAt != nil:
		return errInvitationRevoked
	case inv.ExpiresAt != nil && !s.Now().Before(*inv.ExpiresAt):
		return errInvitationExpired
	case checkUsed && inv.Kind == InviteEmail && inv.UsedAt != nil:
		return errInvitationUsed
	}
	return nil
}

// PreviewInvitation shows what an invitation is for, to anyone holding it.
func (s *Service) PreviewInvitation(ctx context.Context, secret string) (*InvitationPreview, error) {
	inv, o, err := s.usableInvitation(ctx, s.store, secret)
	if err != nil {
		return nil, err
	}
	return &InvitationPreview{Org: o, Role: inv.Role, Kind: inv.Kind, Inviter: inv.Inviter}, nil
}

// AcceptInvitation makes the caller a member of the invitation's org with its
// role, makes that org their default (as switch-org does) and mints a token
// scoped to it keeping the caller's via and session; the refresh token is
// unchanged. An email invitation is bound to its address and consumed by a
// conditional UPDATE, so of concurrent accepts one wins. A caller who is
// already a member gets already_member and consumes nothing, so repeating an
// accept answers the same.
func (s *Service) AcceptInvitation(ctx context.Context, p *gatehouse.Principal, secret string) (*Accepted, error) {
	if !p.Full() {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "accepting an invitation needs a full sign-in session")
	}
	out, err := s.acceptInvitation(ctx, p, secret, false)
	if errors.Is(err, errAcceptRace) {
		// A concurrent accept used the invitation or added the caller:
		// look again, which answers already_member if it was the caller.
		out, err = s.acceptInvitation(ctx, p, secret, true)
	}
	if errors.Is(err, errAcceptRace) {
		err = gatehouse.Internal("accept invitation", err)
	}
	return out, err
}

// errAcceptRace rolls back an accept that lost its invitation or the insert
// of its member row to a concurrent accept.
var errAcceptRace = errors.New("member added by a concurrent accept")

func (s *Service) acceptInvitation(ctx context.Context, p *gatehouse.Principal, secret string, again bool) (*Accepted, error) {
	var out *Accepted
	err := s.store.Tx(ctx, func(tx Store) error {
		if secret == "" {
			return errInvitationNotFound
		}
		hash := token.Hash(secret)
		inv, err := tx.InvitationByHash(ctx, hash)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errInvitationNotFound
		}
		if err != nil {
			return gatehouse.Internal("find invitation", err)
		}
		// Hold the org still (no delete, no member-rule change under way),
		// then read again: what was read before may have changed (org
		// deleted, invitation revoked). Accepts share the lock, so many
		// people can join through one link at once; email invitations stay
		// single use through UseInvitation's conditional update.
		if err := tx.ShareOrg(ctx, inv.OrgID); err != nil {
			return gatehouse.Internal("lock org", err)
		}
		if inv, err = tx.InvitationByHash(ctx, hash); err != nil {
			return gatehouse.Internal("find invitation", err)
		}
		o, err := tx.OrgByID(ctx, inv.OrgID)
		if err != nil {
			return gatehouse.Internal("find org", err)
		}
		if err := s.gone(inv, o, false); err != nil {
			return err
		}
		u, err := tx.UserByID(ctx, p.UserID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return ErrUnauthorized
		}
		if err != nil {
			return gatehouse.Internal("find user", err)
		}
		if inv.Kind == InviteEmail && u.EmailKey != gatehouse.EmailKey(inv.Email) {
			if inv.UsedAt != nil {
				return errInvitationUsed // used up, whoever asks
			}
			return gatehouse.Errorf(gatehouse.KindForbidden, "this invitation was sent to another email address")
		}
		role := inv.Role
		m, err := tx.Member(ctx, o.ID, u.ID)
		already := err == nil
		verified := false
		switch {
		case already:
			role = m.Role
		case !errors.Is(err, gatehouse.ErrNotFound):
			return gatehouse.Internal("find member", err)
		default:
			if err := s.join(ctx, tx, inv, o, u, again); err != nil {
				return err
			}
			if verified, err = s.confirmByMail(ctx, tx, inv, u); err != nil {
				return err
			}
		}
		if err := tx.SetDefaultOrg(ctx, u.ID, o.ID); err != nil {
			return gatehouse.Internal("set default org", err)
		}
		t, err := s.OrgToken(ctx, tx, u.ID, p.SessionID, p.Via, p.Assurance, o, role)
		if err != nil {
			return err
		}
		out = &Accepted{OrgToken: *t, AlreadyMember: already, EmailVerified: verified}
		return nil
	})
	return out, err
}

// confirmByMail confirms u's address when u just used up email invitation
// inv through its mailed link (ByMail): only that address's mailbox had
// it, whereas the inviter holds the other secret and could have signed an
// unproven account up with someone else's address. The update is
// conditional (the address is still the invitation's and unverified);
// the entry goes to u's personal workspace (else the invitation's), and the domain auto-join
// withheld until now runs, as identity's VerifyEmail does.
func (s *Service) confirmByMail(ctx context.Context, tx Tables, inv *Invitation, u *gatehouse.User) (bool, error) {
	if inv.Kind != InviteEmail || !inv.ByMail || u.EmailVerified || u.EmailKey != gatehouse.EmailKey(inv.Email) {
		return false, nil
	}
	now := s.Now()
	ok, err := tx.ConfirmEmail(ctx, u.ID, u.EmailKey, now)
	if err != nil {
		return false, gatehouse.Internal("confirm email", err)
	}
	if !ok {
		return false, nil
	}
	logIn := inv.OrgID // an account without a personal workspace (SSO, SCIM)
	home, err := tx.PersonalOrg(ctx, u.ID)
	switch {
	case err == nil:
		logIn = home.ID
	case !errors.Is(err, gatehouse.ErrNotFound):
		return false, gatehouse.Internal("find personal org", err)
	}
	if err := s.Audit(ctx, tx, logIn, u.ID, "user.email_verified", "user", u.ID, map[string]any{"via": "invitation"}); err != nil {
		return false, gatehouse.Internal("audit", err)
	}
	verified := *u
	verified.EmailVerified, verified.UpdatedAt = true, now
	return true, s.AutoJoin(ctx, tx, &verified)
}

// join makes u a member of o with the invitation's role and uses up an email
// invitation. A race lost on the first try (again false) answers
// errAcceptRace so that the accept looks again; on the second, a used
// invitation is reported as used.
func (s *Service) join(ctx context.Context, tx Tables, inv *Invitation, o *Org, u *gatehouse.User, again bool) error {
	now := s.Now()
	if inv.Kind == InviteEmail {
		if err := tx.UseInvitation(ctx, inv.ID, now); err != nil {
			if errors.Is(err, gatehouse.ErrNotFound) && !again {
				return errAcceptRace
			}
			if errors.Is(err, gatehouse.ErrNotFound) {
				return errInvitationUsed
			}
			return gatehouse.Internal("use invitation", err)
		}
	}
	err := tx.AddMember(ctx, &Membership{OrgID: o.ID, UserID: u.ID, Role: inv.Role, JoinedAt: now})
	if errors.Is(err, gatehouse.ErrConflict) {
		// The same person accepting twice at once: the other won.
		return errAcceptRace
	}
	if err != nil {
		return gatehouse.Internal("add member", err)
	}
	if err := s.Audit(ctx, tx, o.ID, u.ID, "invitation.accepted", "invitation", inv.ID,
		map[string]any{"kind": inv.Kind, "role": inv.Role, "user_id": u.ID}); err != nil {
		return gatehouse.Internal("audit", err)
	}
	return nil
}
