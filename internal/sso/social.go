package sso

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// SocialProvider is one of the instance's upstream OpenID providers
// (social sign-in: Google, Microsoft, GitLab…), set by the operator
// (GATEHOUSE_SOCIAL_*). Its sign-in runs the same flow as a workspace's
// connection (startFlow, verify) under the connection id "social:"+Name,
// but answers for no workspace: the person's own account.
type SocialProvider struct {
	// Name is the provider's key in URLs and links ("google"); renaming
	// it orphans the identities linked under the old name.
	Name string
	// Label is the button's text ("Google"); "": Name.
	Label        string
	Issuer       string
	ClientID     string
	ClientSecret string
	// Scopes asked for; nil: DefaultScopes (openid email profile).
	Scopes []string
}

// socialPrefix starts the connection id of a social provider in flows
// and pending links; a workspace's connection id is a UUID.
const socialPrefix = "social:"

var socialName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Check reports what is wrong with p: a name of lower-case letters,
// digits, _ and - (at most 32), an https issuer (http only on a loopback
// host), a client id and a secret.
func (p *SocialProvider) Check() error {
	if !socialName.MatchString(p.Name) {
		return fmt.Errorf("provider name %q: want 1 to 32 lower-case letters, digits, _ or -", p.Name)
	}
	u, err := url.Parse(p.Issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		(u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))) {
		return fmt.Errorf("%s: issuer must be an https URL without query or fragment, got %q", p.Name, p.Issuer)
	}
	if strings.TrimSpace(p.ClientID) == "" || p.ClientSecret == "" {
		return fmt.Errorf("%s: client id and client secret are required", p.Name)
	}
	if len(p.Label) > maxName || gatehouse.CheckOneLine("label", p.Label) != nil {
		return fmt.Errorf("%s: label must be one line of at most %d bytes", p.Name, maxName)
	}
	return nil
}

func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// Provider is a configured social provider as buttons show it.
type Provider struct {
	Name, Label string
}

// addSocial turns the configured providers into connections: the client
// secret sealed as a connection's is, so one code path reads both.
func (s *Service) addSocial(ps []SocialProvider) {
	s.social = map[string]*Connection{}
	for _, p := range ps {
		id := socialPrefix + p.Name
		label := p.Label
		if label == "" {
			label = p.Name
		}
		scopes := p.Scopes
		if len(scopes) == 0 {
			scopes = DefaultScopes
		}
		c := &Connection{ID: id, Name: label, Issuer: p.Issuer, ClientID: p.ClientID, Scopes: scopes}
		if s.secrets != nil {
			c.SealedSecret = s.secrets.Seal([]byte(p.ClientSecret), []byte(id))
		}
		s.social[id] = c
		s.socialList = append(s.socialList, Provider{Name: p.Name, Label: label})
	}
}

// SocialProviders are the configured social providers, in order.
func (s *Service) SocialProviders() []Provider {
	return append([]Provider(nil), s.socialList...)
}

// SocialStartURL is the path that starts a sign-in at provider name.
func SocialStartURL(name, next string) string {
	u := "/v1/sso/social/" + url.PathEscape(name) + "/start"
	if next != "" && next != "/" {
		u += "?" + url.Values{"next": {next}}.Encode()
	}
	return u
}

var errProviderNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "sign-in provider not found")

// StartSocial begins a sign-in at the social provider name.
func (s *Service) StartSocial(ctx context.Context, name, next string) (*Started, error) {
	c, ok := s.social[socialPrefix+name]
	if !ok {
		return nil, errProviderNotFound
	}
	return s.startFlow(ctx, c, next)
}

// socialCallback completes a social sign-in once its flow is found.
func (s *Service) socialCallback(ctx context.Context, c *Connection, f *Flow, code, iss string, meta gatehouse.SessionMeta) (*Done, error) {
	var si *identity.SignIn
	var err error = errMixUp
	if iss == "" || iss == c.Issuer {
		si, err = s.socialComplete(ctx, c, f, code, meta)
	}
	s.socialEvent(ctx, c, si, err)
	if err != nil {
		return nil, err
	}
	return &Done{SignIn: si, Next: f.Next}, nil
}

// socialComplete verifies the provider's answer and resolves the person:
// the account linked to the subject; else a new account for the address
// (verified only when the provider asserts email_verified); an existing
// account is linked only when both the provider and the account have the
// address verified, and then only once the person proves the account
// (LinkRequired); otherwise a refusal, never a silent link.
func (s *Service) socialComplete(ctx context.Context, c *Connection, f *Flow, code string, meta gatehouse.SessionMeta) (*identity.SignIn, error) {
	idt, cl, err := s.verify(ctx, c, f, code)
	if err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(c.ID, socialPrefix)
	detail := map[string]any{"provider": name}
	userID, err := s.store.SocialUser(ctx, name, idt.Subject)
	if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
		return nil, gatehouse.Internal("find social identity", err)
	}
	if userID != "" {
		u, err := s.store.UserByID(ctx, userID)
		if err != nil {
			return nil, gatehouse.Internal("find user", err)
		}
		if err := s.AllowSignIn(ctx, identity.MethodSocial, u.ID, u.EmailKey); err != nil {
			return nil, err
		}
		return s.socialSession(ctx, identity.Proven{UserID: userID, Via: gatehouse.ViaSocial, Detail: detail}, meta)
	}
	key, email, err := gatehouse.ParseEmail(cl.Email)
	if err != nil {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "%s sent no usable email address", c.Name)
	}
	if err := s.AllowSignIn(ctx, identity.MethodSocial, "", key); err != nil {
		return nil, err
	}
	u, err := s.store.Identity().UserByEmail(ctx, key)
	switch {
	case errors.Is(err, gatehouse.ErrNotFound):
	case err != nil:
		return nil, gatehouse.Internal("find user", err)
	case !u.EmailVerified:
		return nil, gatehouse.Errorf(gatehouse.KindConflict, "an account with this address exists but its address was never confirmed; "+
			"confirm it (or sign in with an emailed link) first")
	case !cl.verified():
		return nil, gatehouse.Errorf(gatehouse.KindConflict, "an account with this address exists and %s does not confirm the address is yours; "+
			"sign in with your password, a passkey or an emailed link", c.Name)
	default:
		return nil, s.pendingLink(ctx, c, idt.Subject, u.ID)
	}
	in := identity.Proven{Email: email, Name: cl.Name, Unverified: !cl.verified(), Via: gatehouse.ViaSocial, Detail: detail}
	return s.socialSession(ctx, in, meta, &Linked{Provider: name, Subject: idt.Subject, Email: email})
}

// socialSession opens the session of in, linking link (if any) to the
// account created for it in the same transaction.
func (s *Service) socialSession(ctx context.Context, in identity.Proven, meta gatehouse.SessionMeta, link ...*Linked) (*identity.SignIn, error) {
	var out *identity.SignIn
	err := s.store.Tx(ctx, func(tx Store) error {
		if len(link) > 0 {
			in.Before = func(_ identity.Store, u *gatehouse.User, _ bool) error {
				l := *link[0]
				l.ID, l.UserID, l.CreatedAt = gatehouse.NewID(), u.ID, s.Now()
				if err := tx.LinkSocial(ctx, &l); errors.Is(err, gatehouse.ErrConflict) {
					return gatehouse.Errorf(gatehouse.KindConflict, "this identity was linked meanwhile; sign in again")
				} else if err != nil {
					return gatehouse.Internal("link social identity", err)
				}
				return nil
			}
		}
		var err error
		out, err = s.id.StartProvenSession(ctx, tx.Identity(), in, meta)
		return err
	})
	return out, err
}

// confirmSocial links a pending social identity to its account (the
// caller proved it: ConfirmLink's checks), in tx.
func (s *Service) confirmSocial(ctx context.Context, tx Store, c *Connection, l *PendingLink) error {
	u, err := tx.UserByID(ctx, l.UserID)
	if err != nil {
		return gatehouse.Internal("find user", err)
	}
	name := strings.TrimPrefix(c.ID, socialPrefix)
	err = tx.LinkSocial(ctx, &Linked{ID: gatehouse.NewID(), Provider: name, Subject: l.Subject, UserID: u.ID, Email: u.Email, CreatedAt: s.Now()})
	if errors.Is(err, gatehouse.ErrConflict) {
		return gatehouse.Errorf(gatehouse.KindConflict, "this identity is linked already")
	}
	if err != nil {
		return gatehouse.Internal("link social identity", err)
	}
	return s.auditUser(ctx, tx, u, "user.identity_linked", map[string]any{"type": "social", "provider": name})
}

// auditUser writes an entry of the person's own account to their
// personal workspace.
func (s *Service) auditUser(ctx context.Context, tx Store, u *gatehouse.User, action string, meta map[string]any) error {
	o, err := s.ws.PersonalOrg(ctx, tx, u)
	if err != nil {
		return err
	}
	return s.ws.Audit(ctx, tx, o.ID, u.ID, action, "user", u.ID, meta)
}

// socialEvent records a social sign-in or its refusal as a security event.
func (s *Service) socialEvent(ctx context.Context, c *Connection, si *identity.SignIn, err error) {
	if s.events == nil {
		return
	}
	attrs := []slog.Attr{slog.String("method", identity.MethodSocial), slog.String("provider", strings.TrimPrefix(c.ID, socialPrefix))}
	var lr *LinkRequired
	var ge *gatehouse.Error
	switch {
	case err == nil:
		s.events.Event(ctx, gatehouse.EventSignIn, append(attrs, slog.String("user_id", si.User.ID), slog.String("session_id", si.SessionID))...)
	case errors.As(err, &lr):
		s.events.Event(ctx, gatehouse.EventSignInFailure, append(attrs, slog.String("reason", "link_required"))...)
	case errors.As(err, &ge) && ge.Kind != gatehouse.KindInternal:
		s.events.Event(ctx, gatehouse.EventSignInFailure, append(attrs, slog.String("reason", ge.Message))...)
	default:
		s.events.Event(ctx, gatehouse.EventSignInFailure, append(attrs, slog.String("reason", "internal"))...)
	}
}
