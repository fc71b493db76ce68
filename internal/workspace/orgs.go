package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/gatehouse/gatehouse"
)

// Slugify derives a slug from a name: lowercase ASCII letters, digits and
// single hyphens, at most 40 characters; "workspace" when nothing is left.
func Slugify(name string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFKD.String(strings.ToLower(name)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			hyphen = false
		case unicode.Is(unicode.Mn, r): // combining marks left by NFKD: drop
		default:
			if !hyphen && b.Len() > 0 {
				b.WriteByte('-')
				hyphen = true
			}
		}
		if b.Len() >= 40 {
			break
		}
	}
	slug := strings.Trim(b.String(), "-")
	if len(slug) < 2 {
		return "workspace"
	}
	return slug
}

func randomSuffix() string {
	var b [3]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// createOrg inserts an org named name with a unique slug derived from it and
// makes ownerID its owner. A personal org is bound to its owner.
func (s *Service) createOrg(ctx context.Context, st Tables, name, kind, ownerID string) (*Org, error) {
	base := Slugify(name)
	o := &Org{ID: gatehouse.NewID(), Name: name, Kind: kind, CreatedAt: s.Now()}
	if kind == OrgPersonal {
		o.OwnerID = ownerID
	}
	for attempt := 0; ; attempt++ {
		o.Slug = base
		if attempt > 0 {
			o.Slug = base + "-" + randomSuffix()
		}
		err := st.CreateOrg(ctx, o)
		if err == nil {
			break
		}
		if !errors.Is(err, gatehouse.ErrConflict) || attempt >= 5 {
			return nil, gatehouse.Internal("create org", err)
		}
		if kind == OrgPersonal {
			// The conflict may be the one-personal-org rule: another request
			// created it first.
			if existing, err := st.PersonalOrg(ctx, ownerID); err == nil {
				return existing, nil
			}
		}
	}
	if err := st.AddMember(ctx, &Membership{OrgID: o.ID, UserID: ownerID, Role: RoleOwner, JoinedAt: o.CreatedAt}); err != nil {
		return nil, gatehouse.Internal("add owner", err)
	}
	return o, nil
}

// PersonalOrg returns the user's personal org, creating it if missing.
func (s *Service) PersonalOrg(ctx context.Context, st Tables, u *gatehouse.User) (*Org, error) {
	o, err := st.PersonalOrg(ctx, u.ID)
	if err == nil {
		return o, nil
	}
	if !errors.Is(err, gatehouse.ErrNotFound) {
		return nil, gatehouse.Internal("personal org", err)
	}
	name := u.Name
	if len([]rune(name)) < 2 {
		name = "Personal"
	}
	return s.createOrg(ctx, st, name, OrgPersonal, u.ID)
}

// HomeOrg returns the org a new sign-in is scoped to: the user's default org
// while they are still a member of it, else their personal org (created if
// missing), which then becomes the default.
func (s *Service) HomeOrg(ctx context.Context, st Tables, u *gatehouse.User) (*OrgContext, error) {
	if u.DefaultOrgID != "" {
		// One read: the org, the membership and the tool switches.
		if o, role, err := st.OrgRole(ctx, u.DefaultOrgID, u.ID); err == nil && o.DeletedAt == nil && role != "" {
			return s.OrgContext(ctx, st, o, role)
		}
	}
	o, err := s.PersonalOrg(ctx, st, u)
	if err != nil {
		return nil, err
	}
	if err := st.SetDefaultOrg(ctx, u.ID, o.ID); err != nil {
		return nil, gatehouse.Internal("set default org", err)
	}
	u.DefaultOrgID = o.ID
	return s.OrgContext(ctx, st, o, RoleOwner)
}

// HomeOrgRead is HomeOrg for a caller that read u's default org o and
// u's role there beside u (o nil: not read, or gone): used as read when
// it is live and u a member, else HomeOrg decides.
func (s *Service) HomeOrgRead(ctx context.Context, st Tables, u *gatehouse.User, o *Org, role string) (*OrgContext, error) {
	if o != nil && u.DefaultOrgID != "" && o.ID == u.DefaultOrgID && o.DeletedAt == nil && role != "" {
		return s.OrgContext(ctx, st, o, role)
	}
	return s.HomeOrg(ctx, st, u)
}

// LiveMember returns org orgID and the user's membership in it, or
// ErrNotFound when the org is deleted or the user is not a member.
func LiveMember(ctx context.Context, st Tables, orgID, userID string) (*Org, *Membership, error) {
	if !gatehouse.IsID(orgID) {
		return nil, nil, gatehouse.ErrNotFound
	}
	o, role, err := st.OrgRole(ctx, orgID, userID)
	if err != nil {
		return nil, nil, err
	}
	if o.DeletedAt != nil || role == "" {
		return nil, nil, gatehouse.ErrNotFound
	}
	m := &Membership{OrgID: orgID, UserID: userID, Role: role}
	return o, m, nil
}

// Bounds of org fields, decided in docs/decisions.md.
const (
	MinOrgName   = 2
	MaxAvatarURL = 2048
)

var slugPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])$`)

// checkOrgName trims name and checks its length and that it is one line.
func checkOrgName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if err := gatehouse.CheckOneLine("name", name); err != nil {
		return "", err
	}
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return "", gatehouse.InvalidField("name", "name is required")
	case n < MinOrgName:
		return "", gatehouse.InvalidField("name", "name must be at least %d characters", MinOrgName)
	case n > MaxName:
		return "", gatehouse.InvalidField("name", "name must be at most %d characters", MaxName)
	}
	return name, nil
}

// orgAvatarURL trims raw and checks it is empty or an absolute http(s) URL.
func orgAvatarURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(raw) > MaxAvatarURL {
		return "", gatehouse.InvalidField("avatar_url", "avatar_url must be an http or https URL of at most %d characters", MaxAvatarURL)
	}
	return raw, nil
}

// lockOrg takes org orgID's row lock in tx and then authorizes p, so the
// caller's role and the org's members cannot change until tx ends.
func (s *Service) lockOrg(ctx context.Context, tx Tables, p *gatehouse.Principal, orgID string, perm Permission, teamOnly bool) (*access, error) {
	if !gatehouse.IsID(orgID) {
		return nil, errOrgNotFound
	}
	if err := tx.LockOrg(ctx, orgID); err != nil {
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil, errOrgNotFound
		}
		return nil, gatehouse.Internal("lock org", err)
	}
	return s.authorize(ctx, tx, p, orgID, perm, teamOnly)
}

// CreateOrg creates a team org owned by the caller, makes it their default
// org when asDefault (the API always asks: its spec says so; the console
// asks only when the person ticks the box, so the default never changes
// silently) and mints a token scoped to it that keeps the caller's via and
// session.
func (s *Service) CreateOrg(ctx context.Context, p *gatehouse.Principal, name string, asDefault bool) (*Org, *OrgToken, error) {
	name, err := checkOrgName(name)
	if err != nil {
		return nil, nil, err
	}
	if !p.Full() {
		return nil, nil, gatehouse.Errorf(gatehouse.KindForbidden, "this token is bound to one workspace and cannot create another")
	}
	var o *Org
	var t *OrgToken
	err = s.store.Tx(ctx, func(tx Store) error {
		if _, err := tx.UserByID(ctx, p.UserID); err != nil {
			if errors.Is(err, gatehouse.ErrNotFound) {
				return ErrUnauthorized
			}
			return gatehouse.Internal("find user", err)
		}
		if o, err = s.createOrg(ctx, tx, name, OrgTeam, p.UserID); err != nil {
			return err
		}
		if asDefault {
			if err := tx.SetDefaultOrg(ctx, p.UserID, o.ID); err != nil {
				return gatehouse.Internal("set default org", err)
			}
		}
		if err := s.Audit(ctx, tx, o.ID, p.UserID, "org.created", "org", o.ID, map[string]any{"name": o.Name, "slug": o.Slug}); err != nil {
			return gatehouse.Internal("audit", err)
		}
		t, err = s.OrgToken(ctx, tx, p.UserID, p.SessionID, p.Via, p.Assurance, o, RoleOwner)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return o, t, nil
}

// OrgProfile returns org orgID with its member and live team counts.
func (s *Service) OrgProfile(ctx context.Context, p *gatehouse.Principal, orgID string) (*OrgProfile, error) {
	a, err := s.authorize(ctx, s.store, p, orgID, "", false)
	if err != nil {
		return nil, err
	}
	return s.profile(ctx, s.store, a.org)
}

func (s *Service) profile(ctx context.Context, st Tables, o *Org) (*OrgProfile, error) {
	members, _, err := st.OrgCounts(ctx, o.ID)
	if err != nil {
		return nil, gatehouse.Internal("count members", err)
	}
	teams, err := st.CountTeams(ctx, o.ID)
	if err != nil {
		return nil, gatehouse.Internal("count teams", err)
	}
	return &OrgProfile{Org: o, MemberCount: members, TeamCount: teams}, nil
}

// OrgPatch is the body of PATCH /v1/orgs/{id}; nil fields are absent.
type OrgPatch struct {
	Name      *string
	Slug      *string
	AvatarURL *string
	// RequireMFA turns the two-factor requirement on or off; turning it
	// on needs the caller's own session at aal2, so no one locks
	// themselves out.
	RequireMFA *bool
}

// UpdateOrg changes a team org's name, slug or avatar. Fields absent or equal
// to the current value do not count; a patch left empty answers 400. Every
// refusal is decided before the write transaction, on a plain read, so a
// refused change takes no lock and writes nothing; the transaction decides
// again on the locked row.
func (s *Service) UpdateOrg(ctx context.Context, p *gatehouse.Principal, orgID string, patch OrgPatch) (*OrgProfile, error) {
	if !gatehouse.IsID(orgID) {
		return nil, errOrgNotFound
	}
	a, err := s.authorize(ctx, s.store, p, orgID, PermSettings, true)
	if err != nil {
		return nil, err
	}
	if _, _, err := patchOrg(p, *a.org, patch); err != nil {
		return nil, err
	}
	var out *OrgProfile
	err = s.store.Tx(ctx, func(tx Store) error {
		a, err := s.lockOrg(ctx, tx, p, orgID, PermSettings, true)
		if err != nil {
			return err
		}
		o, change, err := patchOrg(p, *a.org, patch)
		if err != nil {
			return err
		}
		if err := tx.UpdateOrg(ctx, &o); err != nil {
			if errors.Is(err, gatehouse.ErrConflict) {
				return gatehouse.Errorf(gatehouse.KindConflict, "the slug %q is taken", o.Slug)
			}
			return gatehouse.Internal("update org", err)
		}
		if o.RequireMFA && !a.org.RequireMFA {
			if err := tx.RecordPolicy(ctx, o.ID, s.Now()); err != nil {
				return gatehouse.Internal("record policy", err)
			}
		}
		if err := s.Audit(ctx, tx, o.ID, p.UserID, "org.updated", "org", o.ID, change); err != nil {
			return gatehouse.Internal("audit", err)
		}
		out, err = s.profile(ctx, tx, &o)
		return err
	})
	if err == nil && patch.RequireMFA != nil {
		// The cached standings hold the policy: this instance reads it again
		// at once (the others, for a switch on, within the revocation poll).
		s.ForgetStandings()
	}
	return out, err
}

// patchOrg is o with patch applied and the change's audit details (before
// and after of each field that differs), or why patch is refused: a field
// that is not valid, or nothing that differs.
func patchOrg(p *gatehouse.Principal, o Org, patch OrgPatch) (Org, map[string]any, error) {
	before, after := map[string]any{}, map[string]any{}
	set := func(field string, cur *string, v string) {
		if v != *cur {
			before[field], after[field] = *cur, v
			*cur = v
		}
	}
	if patch.Name != nil {
		name, err := checkOrgName(*patch.Name)
		if err != nil {
			return o, nil, err
		}
		set("name", &o.Name, name)
	}
	if patch.Slug != nil {
		slug := strings.TrimSpace(*patch.Slug)
		if !slugPattern.MatchString(slug) {
			return o, nil, gatehouse.InvalidField("slug", "slug must be 2 to 40 lowercase letters, digits or hyphens, starting and ending with a letter or digit")
		}
		set("slug", &o.Slug, slug)
	}
	if patch.AvatarURL != nil {
		avatar, err := orgAvatarURL(*patch.AvatarURL)
		if err != nil {
			return o, nil, err
		}
		set("avatar_url", &o.AvatarURL, avatar)
	}
	if patch.RequireMFA != nil && *patch.RequireMFA != o.RequireMFA {
		// Either way at aal2: turning it on must not lock the caller out,
		// and only a caller the policy admits may lift it.
		if p.AAL != gatehouse.AAL2 {
			return o, nil, gatehouse.Errorf(gatehouse.KindForbidden, "set up two-factor authentication for yourself before requiring it of the workspace").WithField("require_mfa")
		}
		before["require_mfa"], after["require_mfa"] = o.RequireMFA, *patch.RequireMFA
		o.RequireMFA = *patch.RequireMFA
	}
	if len(after) == 0 {
		return o, nil, gatehouse.Invalid("nothing to change: give name, slug, avatar_url or require_mfa different from the current values")
	}
	return o, map[string]any{"before": before, "after": after}, nil
}

// DeleteOrg soft-deletes a team org. It is gone at once for every member;
// users whose default it was fall back to their personal org, and its
// invitations answer 410.
func (s *Service) DeleteOrg(ctx context.Context, p *gatehouse.Principal, orgID string) error {
	defer s.ForgetStandings() // every member's standing in the org
	return s.store.Tx(ctx, func(tx Store) error {
		a, err := s.lockOrg(ctx, tx, p, orgID, PermDelete, true)
		if err != nil {
			return err
		}
		if err := tx.SoftDeleteOrg(ctx, orgID, s.Now()); err != nil {
			return gatehouse.Internal("delete org", err)
		}
		if err := tx.ClearDefaultOrg(ctx, orgID, ""); err != nil {
			return gatehouse.Internal("clear default org", err)
		}
		if err := s.Audit(ctx, tx, orgID, p.UserID, "org.deleted", "org", orgID, map[string]any{"name": a.org.Name, "slug": a.org.Slug}); err != nil {
			return gatehouse.Internal("audit", err)
		}
		return nil
	})
}
