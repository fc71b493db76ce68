package workspace

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/clientmeta"
	"github.com/gatehouse/gatehouse/internal/token"
)

// Workspace applications (issue 25 item 3): OAuth clients a team org's
// owners and admins register for their own products. The rows and their
// rules are here; internal/oauth turns a live application into an
// oauth.Client and authenticates it.

// Token endpoint authentication methods (RFC 7591 §2).
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// Bounds of applications.
const (
	// ClientIDPrefix starts the client_id of every application; the rest
	// is its id.
	ClientIDPrefix = "app_"
	// SecretPrefix starts every application secret, so a leaked one is
	// recognised.
	SecretPrefix = "gha_"
	// MaxApplications is how many live applications a workspace may have.
	MaxApplications = 50
	// MaxAppRedirectURIs bounds redirect_uris and post_logout_redirect_uris.
	MaxAppRedirectURIs = 20
	// MaxSecretGrace is the longest a rotated secret keeps working.
	MaxSecretGrace = 7 * 24 * time.Hour
)

// ApplicationScopes are the scopes an application may be allowed: the
// OpenID Connect scopes and the tool scopes.
var ApplicationScopes = []string{"openid", "profile", "email", "offline_access",
	"tasks:read", "tasks:write", "links:read", "links:write", "forms:read", "forms:write", "sign:read", "sign:write"}

// Application is a workspace application.
type Application struct {
	ID                     string
	OrgID                  string
	ClientName             string
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
	// Scope is the allowed scopes, space-separated; "" allows any.
	Scope      string
	AuthMethod string
	// JWKSURI or JWKS (the inline set's JSON) holds the keys of a
	// private_key_jwt application; both "" otherwise.
	JWKSURI              string
	JWKS                 string
	IDTokenAlg           string
	BackchannelLogoutURI string
	FirstParty           bool
	// SecretHash is token.Hash of the secret of a secret method ("" for
	// the others); PrevSecretHash the one before a rotation with grace,
	// accepted until PrevSecretUntil.
	SecretHash      string
	PrevSecretHash  string
	PrevSecretUntil time.Time
	CreatedBy       string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// ClientID is the application's OAuth client_id.
func (a *Application) ClientID() string { return ClientIDPrefix + a.ID }

// HasSecret reports whether the application authenticates with a secret.
func (a *Application) HasSecret() bool { return SecretMethod(a.AuthMethod) }

// SecretMethod reports whether method authenticates with a client secret.
func SecretMethod(method string) bool {
	return method == AuthClientSecretBasic || method == AuthClientSecretPost
}

// SecretMatches reports, in constant time, whether secret is the
// application's secret, or its previous one within the grace of the last
// rotation.
func (a *Application) SecretMatches(secret string, now time.Time) bool {
	if a.SecretHash == "" || secret == "" {
		return false
	}
	h := token.Hash(secret)
	ok := subtle.ConstantTimeCompare([]byte(h), []byte(a.SecretHash)) == 1
	prev := a.PrevSecretHash != "" && now.Before(a.PrevSecretUntil) &&
		subtle.ConstantTimeCompare([]byte(h), []byte(a.PrevSecretHash)) == 1
	return ok || prev
}

// ApplicationInput is the body that creates an application, or patches
// one: a nil field is left as it is (or defaulted on create).
type ApplicationInput struct {
	ClientName             *string
	RedirectURIs           *[]string
	PostLogoutRedirectURIs *[]string
	Scope                  *string
	AuthMethod             *string
	JWKSURI                *string
	// JWKS is the inline key set's JSON; nil: absent, "null": none.
	JWKS                 json.RawMessage
	IDTokenAlg           *string
	BackchannelLogoutURI *string
	FirstParty           *bool
}

// NewApplication is a created application, or one whose secret was
// rotated, with its secret (shown once; "" for methods without one).
type NewApplication struct {
	App    *Application
	Secret string
}

var errAppNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "application not found")

// apply writes the fields in onto a, checking each.
func (in *ApplicationInput) apply(a *Application, create bool) error {
	if in.ClientName != nil || create {
		n := ""
		if in.ClientName != nil {
			n = *in.ClientName
		}
		name, err := CheckName("client_name", n)
		if err != nil {
			return err
		}
		a.ClientName = name
	}
	if in.RedirectURIs != nil || create {
		var us []string
		if in.RedirectURIs != nil {
			us = *in.RedirectURIs
		}
		if len(us) == 0 {
			return gatehouse.InvalidField("redirect_uris", "redirect_uris needs at least one URI")
		}
		if err := checkURIs("redirect_uris", us); err != nil {
			return err
		}
		a.RedirectURIs = slices.Clone(us)
	}
	if in.PostLogoutRedirectURIs != nil {
		if err := checkURIs("post_logout_redirect_uris", *in.PostLogoutRedirectURIs); err != nil {
			return err
		}
		a.PostLogoutRedirectURIs = slices.Clone(*in.PostLogoutRedirectURIs)
	}
	if a.PostLogoutRedirectURIs == nil {
		a.PostLogoutRedirectURIs = []string{}
	}
	if in.Scope != nil {
		sc, err := checkAppScope(*in.Scope)
		if err != nil {
			return err
		}
		a.Scope = sc
	}
	if in.AuthMethod != nil || create {
		m := AuthClientSecretBasic // RFC 7591 §2's default
		if in.AuthMethod != nil && *in.AuthMethod != "" {
			m = *in.AuthMethod
		}
		switch m {
		case AuthNone, AuthClientSecretBasic, AuthClientSecretPost, AuthPrivateKeyJWT:
		default:
			return gatehouse.InvalidField("token_endpoint_auth_method", "token_endpoint_auth_method must be none, client_secret_basic, client_secret_post or private_key_jwt")
		}
		if !create && m != a.AuthMethod && !(SecretMethod(m) && a.HasSecret()) {
			return gatehouse.InvalidField("token_endpoint_auth_method", "token_endpoint_auth_method can change only between client_secret_basic and client_secret_post; register a new application")
		}
		a.AuthMethod = m
	}
	if in.JWKSURI != nil {
		a.JWKSURI = strings.TrimSpace(*in.JWKSURI)
	}
	if in.JWKS != nil {
		if string(in.JWKS) == "null" {
			a.JWKS = ""
		} else {
			a.JWKS = string(in.JWKS)
		}
	}
	if a.AuthMethod == AuthPrivateKeyJWT {
		if (a.JWKSURI == "") == (a.JWKS == "") {
			return gatehouse.InvalidField("jwks", "private_key_jwt needs exactly one of jwks_uri and jwks")
		}
		if a.JWKSURI != "" {
			if err := clientmeta.JWKSURI(a.JWKSURI); err != nil {
				return gatehouse.InvalidField("jwks_uri", "%v", err)
			}
		}
		if a.JWKS != "" {
			if _, err := clientmeta.ParseJWKS([]byte(a.JWKS)); err != nil {
				return gatehouse.InvalidField("jwks", "%v", err)
			}
			var compact json.RawMessage = []byte(a.JWKS)
			if b, err := json.Marshal(compact); err == nil {
				a.JWKS = string(b)
			}
		}
	} else if a.JWKSURI != "" || a.JWKS != "" {
		return gatehouse.InvalidField("jwks", "jwks_uri and jwks are for private_key_jwt only")
	}
	if in.IDTokenAlg != nil {
		if err := clientmeta.IDTokenAlg(*in.IDTokenAlg); err != nil {
			return gatehouse.InvalidField("id_token_signed_response_alg", "%v", err)
		}
		a.IDTokenAlg = *in.IDTokenAlg
	}
	if a.IDTokenAlg == "" {
		a.IDTokenAlg = clientmeta.IDTokenAlgs[0]
	}
	if in.BackchannelLogoutURI != nil {
		u := strings.TrimSpace(*in.BackchannelLogoutURI)
		if u != "" {
			if err := clientmeta.BackchannelURI(u); err != nil {
				return gatehouse.InvalidField("backchannel_logout_uri", "%v", err)
			}
		}
		a.BackchannelLogoutURI = u
	}
	if in.FirstParty != nil {
		a.FirstParty = *in.FirstParty
	}
	return nil
}

// checkURIs checks a list of redirect URIs: at most MaxAppRedirectURIs,
// each by the rules of dynamic registration, no repeats.
func checkURIs(field string, us []string) error {
	if len(us) > MaxAppRedirectURIs {
		return gatehouse.InvalidField(field, "%s may hold at most %d URIs", field, MaxAppRedirectURIs)
	}
	seen := map[string]bool{}
	for _, u := range us {
		if err := clientmeta.RedirectURI(u); err != nil {
			return gatehouse.InvalidField(field, "%s: %v", field, err)
		}
		if seen[u] {
			return gatehouse.InvalidField(field, "%s repeats %s", field, u)
		}
		seen[u] = true
	}
	return nil
}

// checkAppScope checks a space-separated list of allowed scopes: known
// words, each once; answered in canonical order.
func checkAppScope(raw string) (string, error) {
	want := map[string]bool{}
	for _, w := range strings.Fields(raw) {
		if !slices.Contains(ApplicationScopes, w) {
			return "", gatehouse.InvalidField("scope", "unknown scope %q: scopes are %s", w, strings.Join(ApplicationScopes, " "))
		}
		want[w] = true
	}
	var out []string
	for _, s := range ApplicationScopes {
		if want[s] {
			out = append(out, s)
		}
	}
	return strings.Join(out, " "), nil
}

// manageApps is the access of an owner or admin of a team org.
func (s *Service) manageApps(ctx context.Context, st Tables, p *gatehouse.Principal, orgID string) error {
	_, err := s.authorize(ctx, st, p, orgID, PermSettings, true)
	return err
}

// Applications lists an org's live applications, oldest first.
func (s *Service) Applications(ctx context.Context, p *gatehouse.Principal, orgID string) ([]Application, error) {
	if err := s.manageApps(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	as, err := s.store.ListApplications(ctx, orgID)
	if err != nil {
		return nil, gatehouse.Internal("list applications", err)
	}
	return as, nil
}

// Application returns one of an org's live applications.
func (s *Service) Application(ctx context.Context, p *gatehouse.Principal, orgID, id string) (*Application, error) {
	if err := s.manageApps(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	return appOf(ctx, s.store, orgID, id)
}

// appOf is the live application id of org orgID; 404 otherwise.
func appOf(ctx context.Context, st Tables, orgID, id string) (*Application, error) {
	if !gatehouse.IsID(id) {
		return nil, errAppNotFound
	}
	a, err := st.ApplicationByID(ctx, id)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && a.OrgID != orgID) {
		return nil, errAppNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find application", err)
	}
	return a, nil
}

// LiveApplication is the live application of a live org whose client_id
// is clientID; ErrNotFound when there is none. The authorization server
// resolves clients with it.
func LiveApplication(ctx context.Context, st Tables, clientID string) (*Application, error) {
	id, ok := strings.CutPrefix(clientID, ClientIDPrefix)
	if !ok || !gatehouse.IsID(id) {
		return nil, gatehouse.ErrNotFound
	}
	return st.ApplicationByID(ctx, id)
}

// newAppSecret returns a secret for a and sets its hash.
func newAppSecret(a *Application) string {
	secret := token.NewSecret(SecretPrefix)
	a.SecretHash = token.Hash(secret)
	return secret
}

// CreateApplication registers an application of a team org; its secret
// (for the secret methods) is answered once.
func (s *Service) CreateApplication(ctx context.Context, p *gatehouse.Principal, orgID string, in ApplicationInput) (*NewApplication, error) {
	if s.recentAuth != nil {
		if err := s.recentAuth(ctx, p, "register an application"); err != nil {
			return nil, err
		}
	}
	var out *NewApplication
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := s.manageApps(ctx, tx, p, orgID); err != nil {
			return err
		}
		now := s.Now()
		a := &Application{ID: gatehouse.NewID(), OrgID: orgID, CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now}
		if err := in.apply(a, true); err != nil {
			return err
		}
		if err := tx.LockOrg(ctx, orgID); err != nil {
			return gatehouse.Internal("lock org", err)
		}
		n, err := tx.CountApplications(ctx, orgID)
		if err != nil {
			return gatehouse.Internal("count applications", err)
		}
		if n >= MaxApplications {
			return gatehouse.Errorf(gatehouse.KindConflict, "a workspace may have at most %d applications; delete one first", MaxApplications)
		}
		secret := ""
		if a.HasSecret() {
			secret = newAppSecret(a)
		}
		if err := tx.CreateApplication(ctx, a); err != nil {
			return gatehouse.Internal("create application", err)
		}
		out = &NewApplication{App: a, Secret: secret}
		return s.Audit(ctx, tx, orgID, p.UserID, "application.created", "application", a.ID,
			map[string]any{"client_id": a.ClientID(), "client_name": a.ClientName, "token_endpoint_auth_method": a.AuthMethod, "first_party": a.FirstParty})
	})
	return out, err
}

// UpdateApplication changes an application's settings. Moving from one
// secret method to the other keeps the secret; any other change of method
// is refused.
func (s *Service) UpdateApplication(ctx context.Context, p *gatehouse.Principal, orgID, id string, in ApplicationInput) (*Application, error) {
	var out *Application
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := s.manageApps(ctx, tx, p, orgID); err != nil {
			return err
		}
		a, err := appOf(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if err := in.apply(a, false); err != nil {
			return err
		}
		a.UpdatedAt = s.Now()
		if err := tx.UpdateApplication(ctx, a); errors.Is(err, gatehouse.ErrNotFound) {
			return errAppNotFound
		} else if err != nil {
			return gatehouse.Internal("update application", err)
		}
		out = a
		return s.Audit(ctx, tx, orgID, p.UserID, "application.updated", "application", a.ID,
			map[string]any{"client_id": a.ClientID(), "fields": in.fields()})
	})
	return out, err
}

// fields names the fields the input sets, for the audit log.
func (in *ApplicationInput) fields() []string {
	out := []string{}
	for name, set := range map[string]bool{"client_name": in.ClientName != nil, "redirect_uris": in.RedirectURIs != nil,
		"post_logout_redirect_uris": in.PostLogoutRedirectURIs != nil, "scope": in.Scope != nil,
		"token_endpoint_auth_method": in.AuthMethod != nil, "jwks_uri": in.JWKSURI != nil, "jwks": in.JWKS != nil,
		"id_token_signed_response_alg": in.IDTokenAlg != nil, "backchannel_logout_uri": in.BackchannelLogoutURI != nil,
		"first_party": in.FirstParty != nil} {
		if set {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// RotateApplicationSecret gives an application of a secret method a new
// secret; the previous one keeps working for grace (at most
// MaxSecretGrace; 0 ends it now). Only the last previous secret is kept.
func (s *Service) RotateApplicationSecret(ctx context.Context, p *gatehouse.Principal, orgID, id string, grace time.Duration) (*NewApplication, error) {
	if s.recentAuth != nil {
		if err := s.recentAuth(ctx, p, "rotate an application secret"); err != nil {
			return nil, err
		}
	}
	if grace < 0 || grace > MaxSecretGrace {
		return nil, gatehouse.InvalidField("grace_seconds", "grace_seconds must be 0 to %d", int(MaxSecretGrace/time.Second))
	}
	var out *NewApplication
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := s.manageApps(ctx, tx, p, orgID); err != nil {
			return err
		}
		a, err := appOf(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if !a.HasSecret() {
			return gatehouse.Errorf(gatehouse.KindConflict, "this application has no secret (token_endpoint_auth_method %s)", a.AuthMethod)
		}
		now := s.Now()
		a.PrevSecretHash, a.PrevSecretUntil = "", time.Time{}
		if grace > 0 {
			a.PrevSecretHash, a.PrevSecretUntil = a.SecretHash, now.Add(grace)
		}
		secret := newAppSecret(a)
		a.UpdatedAt = now
		if err := tx.UpdateApplication(ctx, a); errors.Is(err, gatehouse.ErrNotFound) {
			return errAppNotFound
		} else if err != nil {
			return gatehouse.Internal("rotate secret", err)
		}
		out = &NewApplication{App: a, Secret: secret}
		return s.Audit(ctx, tx, orgID, p.UserID, "application.secret_rotated", "application", a.ID,
			map[string]any{"client_id": a.ClientID(), "grace_seconds": int(grace / time.Second)})
	})
	return out, err
}

// DeleteApplication deletes an application: every grant made to it and
// every session under them end in the same transaction (revoked on every
// instance), and its client_id stops resolving.
func (s *Service) DeleteApplication(ctx context.Context, p *gatehouse.Principal, orgID, id string) error {
	if s.recentAuth != nil {
		if err := s.recentAuth(ctx, p, "delete an application"); err != nil {
			return err
		}
	}
	return s.store.Tx(ctx, func(tx Store) error {
		if err := s.manageApps(ctx, tx, p, orgID); err != nil {
			return err
		}
		a, err := appOf(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteApplication(ctx, a.ID, a.ClientID(), s.Now()); errors.Is(err, gatehouse.ErrNotFound) {
			return errAppNotFound
		} else if err != nil {
			return gatehouse.Internal("delete application", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "application.deleted", "application", a.ID,
			map[string]any{"client_id": a.ClientID(), "client_name": a.ClientName})
	})
}
