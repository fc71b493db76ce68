package workspace

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"strings"

	"github.com/gatehouse/gatehouse"
)

// TXTPrefix starts the value of every domain proof record.
const TXTPrefix = "gatehouse-verification="

// TXTName is where the proof of domain d is published.
func TXTName(d string) string { return "_service." + d }

// TXTResolver reads DNS TXT records.
type TXTResolver interface {
	TXT(ctx context.Context, name string) ([]string, error)
}

var errDomainNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "domain claim not found")

// Domains lists an org's domain claims.
func (s *Service) Domains(ctx context.Context, p *gatehouse.Principal, orgID string) ([]DomainClaim, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, PermDomains, false); err != nil {
		return nil, err
	}
	ds, err := s.store.ListDomains(ctx, orgID)
	if err != nil {
		return nil, gatehouse.Internal("list domains", err)
	}
	return ds, nil
}

func checkMode(mode string, required bool) (string, error) {
	switch mode {
	case "":
		if required {
			return "", gatehouse.InvalidField("mode", "mode is required: suggest or auto_join")
		}
		return ModeSuggest, nil
	case ModeSuggest, ModeAutoJoin:
		return mode, nil
	}
	return "", gatehouse.InvalidField("mode", "mode must be suggest or auto_join")
}

// newVerificationToken returns 32 random characters of an alphabet that
// survives DNS tooling unchanged.
func newVerificationToken() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 32)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[n.Int64()]
	}
	return string(b)
}

// ClaimDomain records an unverified claim and returns it with the TXT proof
// to publish. Public mailbox providers cannot be claimed.
func (s *Service) ClaimDomain(ctx context.Context, p *gatehouse.Principal, orgID, raw, mode string) (*DomainClaim, error) {
	var d *DomainClaim
	err := s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.authorize(ctx, tx, p, orgID, PermDomains, true); err != nil {
			return err
		}
		name, err := NormalizeDomain(raw)
		if err != nil {
			return err
		}
		if IsPublicEmailDomain(name) {
			return gatehouse.Invalid("%s is a public email provider and cannot be claimed", name)
		}
		if mode, err = checkMode(mode, false); err != nil {
			return err
		}
		if other, err := tx.DomainVerifiedBy(ctx, name); err == nil && other != orgID {
			return gatehouse.Errorf(gatehouse.KindConflict, "%s is already verified by another organization", name)
		} else if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Internal("domain owner", err)
		}
		d = &DomainClaim{ID: gatehouse.NewID(), OrgID: orgID, Domain: name, Mode: mode, Token: newVerificationToken(), CreatedAt: s.Now()}
		if err := tx.CreateDomain(ctx, d); errors.Is(err, gatehouse.ErrConflict) {
			return gatehouse.Errorf(gatehouse.KindConflict, "%s is already claimed by this organization", name)
		} else if err != nil {
			return gatehouse.Internal("create domain", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "domain.created", "domain", d.ID, map[string]any{"domain": name, "mode": mode})
	})
	return d, err
}

// SetDomainMode switches a claim between suggest and auto_join.
func (s *Service) SetDomainMode(ctx context.Context, p *gatehouse.Principal, orgID, id, mode string) (*DomainClaim, error) {
	var d *DomainClaim
	err := s.store.Tx(ctx, func(tx Store) error {
		var err error
		if d, err = s.domainFor(ctx, tx, p, orgID, id); err != nil {
			return err
		}
		if mode, err = checkMode(mode, true); err != nil {
			return err
		}
		if mode == d.Mode {
			return nil
		}
		if err := tx.SetDomainMode(ctx, d.ID, mode); errors.Is(err, gatehouse.ErrNotFound) {
			return errDomainNotFound // deleted meanwhile
		} else if err != nil {
			return gatehouse.Internal("set mode", err)
		}
		old := d.Mode
		d.Mode = mode
		return s.Audit(ctx, tx, orgID, p.UserID, "domain.updated", "domain", d.ID, map[string]any{"domain": d.Domain, "old_mode": old, "new_mode": mode})
	})
	return d, err
}

func (s *Service) domainFor(ctx context.Context, st Tables, p *gatehouse.Principal, orgID, id string) (*DomainClaim, error) {
	if _, err := s.authorize(ctx, st, p, orgID, PermDomains, false); err != nil {
		return nil, err
	}
	if !gatehouse.IsID(id) {
		return nil, errDomainNotFound
	}
	d, err := st.DomainByID(ctx, orgID, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errDomainNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find domain", err)
	}
	return d, nil
}

// DeleteDomain removes a claim; members who joined through it stay.
func (s *Service) DeleteDomain(ctx context.Context, p *gatehouse.Principal, orgID, id string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		d, err := s.domainFor(ctx, tx, p, orgID, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteDomain(ctx, d.ID); errors.Is(err, gatehouse.ErrNotFound) {
			return errDomainNotFound // deleted meanwhile
		} else if err != nil {
			return gatehouse.Internal("delete domain", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "domain.deleted", "domain", d.ID, map[string]any{"domain": d.Domain})
	})
}

// VerifyDomain reads the TXT record at _service.<domain> and marks the claim
// verified when it holds the issued proof. Verifying twice is harmless.
func (s *Service) VerifyDomain(ctx context.Context, p *gatehouse.Principal, orgID, id string) (*DomainClaim, string, error) {
	d, err := s.domainFor(ctx, s.store, p, orgID, id)
	if err != nil {
		return nil, "", err
	}
	if d.VerifiedAt != nil {
		return d, "domain already verified", nil
	}
	taken := gatehouse.Errorf(gatehouse.KindConflict, "%s was verified by another organization first", d.Domain)
	if other, err := s.store.DomainVerifiedBy(ctx, d.Domain); err == nil && other != orgID {
		return nil, "", taken
	}
	want := TXTPrefix + d.Token
	// The lookup runs outside any transaction: DNS can take seconds.
	records, err := s.resolver.TXT(ctx, TXTName(d.Domain))
	if err != nil {
		s.log.Info("domain verification lookup failed", "domain", d.Domain, "err", err)
	}
	found := false
	for _, r := range records {
		found = found || strings.TrimSpace(r) == want
	}
	if !found {
		return nil, "", gatehouse.Invalid("no TXT record %q with value %q was found yet; DNS changes can take minutes to hours to propagate, so try again later", TXTName(d.Domain), want)
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		cur, err := s.domainFor(ctx, tx, p, orgID, id)
		if err != nil {
			return err
		}
		if cur.VerifiedAt != nil {
			d = cur
			return nil
		}
		now := s.Now()
		if err := tx.MarkDomainVerified(ctx, d.ID, now); errors.Is(err, gatehouse.ErrConflict) {
			return taken
		} else if err != nil {
			return gatehouse.Internal("verify domain", err)
		}
		d.VerifiedAt = &now
		return s.Audit(ctx, tx, orgID, p.UserID, "domain.verified", "domain", d.ID, map[string]any{"domain": d.Domain})
	})
	if err != nil {
		return nil, "", err
	}
	return d, "domain verified", nil
}

// emailDomain is the part of an address after the @: of an email key, the
// domain's A-label, which is how claimed domains are stored.
func emailDomain(email string) string { return email[strings.LastIndexByte(email, '@')+1:] }

// Discoverable returns the first org offered to the caller through a
// verified suggest-mode claim on their email domain that they are not yet a
// member of, or nil. Nothing is offered before the email is verified.
func (s *Service) Discoverable(ctx context.Context, p *gatehouse.Principal) (*DomainOffer, error) {
	u, err := Caller(ctx, s.store, p.UserID)
	if err != nil {
		return nil, err
	}
	if !u.EmailVerified {
		return nil, nil
	}
	offers, err := s.store.DomainOffers(ctx, emailDomain(u.EmailKey))
	if err != nil {
		return nil, gatehouse.Internal("domain offers", err)
	}
	for _, o := range offers {
		if o.Mode != ModeSuggest {
			continue
		}
		if _, err := s.store.Member(ctx, o.Org.ID, u.ID); errors.Is(err, gatehouse.ErrNotFound) {
			return &o, nil
		} else if err != nil {
			return nil, gatehouse.Internal("membership", err)
		}
	}
	return nil, nil
}

// JoinDiscoverable adds the caller as a member of the org offered to their
// email domain and returns a token switched into it. It is idempotent for
// existing members.
func (s *Service) JoinDiscoverable(ctx context.Context, p *gatehouse.Principal) (*OrgToken, error) {
	if p.Via == gatehouse.ViaAPIKey || p.Via == gatehouse.ViaOAuth {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "this token is bound to one workspace and cannot join another")
	}
	var out *OrgToken
	err := s.store.Tx(ctx, func(tx Store) error {
		u, err := Caller(ctx, tx, p.UserID)
		if err != nil {
			return err
		}
		if !u.EmailVerified {
			return gatehouse.Errorf(gatehouse.KindForbidden, "verify your email address before joining an organization by its domain")
		}
		offers, err := tx.DomainOffers(ctx, emailDomain(u.EmailKey))
		if err != nil {
			return gatehouse.Internal("domain offers", err)
		}
		var pick *DomainOffer
		role := RoleMember
		// A suggest-mode org the caller is not in yet is the offer; failing
		// that, joining is idempotent for an org of the domain the caller is
		// already in (suggest or auto_join alike).
		for i, o := range offers {
			m, err := tx.Member(ctx, o.Org.ID, u.ID)
			if errors.Is(err, gatehouse.ErrNotFound) {
				if o.Mode != ModeSuggest {
					continue
				}
				pick, role = &offers[i], RoleMember
				break
			}
			if err != nil {
				return gatehouse.Internal("membership", err)
			}
			if pick == nil {
				pick, role = &offers[i], m.Role
			}
		}
		if pick == nil {
			return gatehouse.Errorf(gatehouse.KindNotFound, "no organization is offered for your email domain")
		}
		if err := tx.AddMember(ctx, &Membership{OrgID: pick.Org.ID, UserID: u.ID, Role: RoleMember, JoinedAt: s.Now()}); err == nil {
			if err := s.Audit(ctx, tx, pick.Org.ID, u.ID, "member.joined", "user", u.ID, map[string]any{"via": "domain", "domain": pick.Domain, "role": RoleMember}); err != nil {
				return err
			}
		} else if !errors.Is(err, gatehouse.ErrConflict) {
			return gatehouse.Internal("add member", err)
		}
		if err := tx.SetDefaultOrg(ctx, u.ID, pick.Org.ID); err != nil {
			return gatehouse.Internal("set default org", err)
		}
		out, err = s.OrgToken(ctx, tx, u.ID, p.SessionID, p.Via, p.Assurance, &pick.Org, role)
		return err
	})
	return out, err
}

// AutoJoin adds a user with a verified email to every org that verified
// their email domain in auto_join mode, and to every org whose directory
// provisioned their address (SCIM) while it was unproven.
func (s *Service) AutoJoin(ctx context.Context, st Tables, u *gatehouse.User) error {
	if !u.EmailVerified {
		return nil
	}
	if err := s.attachProvisions(ctx, st, u); err != nil {
		return err
	}
	offers, err := st.DomainOffers(ctx, emailDomain(u.EmailKey))
	if err != nil {
		return gatehouse.Internal("domain offers", err)
	}
	for _, o := range offers {
		if o.Mode != ModeAutoJoin {
			continue
		}
		err := st.AddMember(ctx, &Membership{OrgID: o.Org.ID, UserID: u.ID, Role: RoleMember, JoinedAt: s.Now()})
		if errors.Is(err, gatehouse.ErrConflict) {
			continue
		}
		if err != nil {
			return gatehouse.Internal("auto-join", err)
		}
		if err := s.Audit(ctx, st, o.Org.ID, u.ID, "member.joined", "user", u.ID, map[string]any{"via": "auto_join", "domain": o.Domain, "role": RoleMember}); err != nil {
			return err
		}
	}
	return nil
}

// Provision is a pending SCIM directory user: an address a workspace's
// directory provisioned before anyone proved it, and the role that
// workspace provisions with ("" for member).
type Provision struct{ ID, OrgID, Role string }

// attachProvisions makes u, whose address was just proven, the account of
// every pending directory user of that address, a member of its workspace
// with the workspace's provisioning role (never owner), and a member of
// the teams of the SCIM groups the directory put it in while it was
// pending.
func (s *Service) attachProvisions(ctx context.Context, st Tables, u *gatehouse.User) error {
	ps, err := st.PendingProvisions(ctx, u.EmailKey)
	if err != nil {
		return gatehouse.Internal("pending provisions", err)
	}
	for _, p := range ps {
		if err := st.AttachProvision(ctx, p.ID, u.ID); errors.Is(err, gatehouse.ErrNotFound) {
			continue
		} else if err != nil {
			return gatehouse.Internal("attach provision", err)
		}
		role := p.Role
		if role == RoleOwner || !IsRole(role) {
			role = RoleMember
		}
		err := st.AddMember(ctx, &Membership{OrgID: p.OrgID, UserID: u.ID, Role: role, JoinedAt: s.Now()})
		if err == nil {
			err = s.Audit(ctx, st, p.OrgID, u.ID, "member.joined", "user", u.ID, map[string]any{"via": "scim", "role": role})
		} else if errors.Is(err, gatehouse.ErrConflict) {
			err = nil // a member already keeps their role
		}
		if err != nil {
			return gatehouse.Internal("join provisioned", err)
		}
		if err := s.joinProvisionTeams(ctx, st, p.ID, u.ID); err != nil {
			return err
		}
	}
	return nil
}

// joinProvisionTeams puts userID in the teams of the SCIM groups of
// directory user dirUserID.
func (s *Service) joinProvisionTeams(ctx context.Context, st Tables, dirUserID, userID string) error {
	teams, err := st.ProvisionTeams(ctx, dirUserID)
	if err != nil {
		return gatehouse.Internal("provision teams", err)
	}
	for _, team := range teams {
		if err := st.UpsertTeamMember(ctx, team, userID, TeamMember, s.Now()); err != nil {
			return gatehouse.Internal("join provisioned team", err)
		}
	}
	return nil
}
