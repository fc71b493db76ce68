package pages

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/sso"
)

// navItem is one entry of the console navigation.
type navItem struct{ Key, Label, Path string }

var consoleNav = []navItem{
	{"home", "Home", "/"},
	{"profile", "Account", "/account"},
	{"sessions", "Sessions", "/account/sessions"},
	{"passkeys", "Passkeys", "/account/passkeys"},
	{"identities", "Linked sign-ins", "/account/identities"},
	{"two-factor", "Two-factor", twoFactorPath},
	{"apps", "Connected apps", "/account/apps"},
	{"keys", "Personal API keys", "/account/keys"},
	{"workspaces", "Workspaces", "/account/workspaces"},
}

// mountConsole serves the signed-in console: home and the account pages.
// Every page action goes through the adapter (adapter.go: h.console,
// h.inWorkspace), which answers its errors; every POST goes through
// h.form and answers with a redirect (PRG).
func mountConsole(m Mux, h *handlers) {
	form := h.form
	m.HandleFunc("GET /{$}", h.flow(h.handleHome))
	m.Handle("POST /join", form(h.console(h.handleJoinDiscoverable)))
	m.HandleFunc("GET /signup", h.flow(h.handleSignUpPage))
	m.Handle("POST /signup", form(h.handleSignUp))
	m.HandleFunc("GET /account", h.consoleView("profile", h.profileView))
	m.Handle("POST /account/profile", form(h.console(h.handleProfile)))
	m.Handle("POST /account/verify-email", form(h.console(h.handleResend)))
	m.Handle("POST /account/email", form(h.console(h.handleChangeEmail)))
	m.Handle("POST /account/password", form(h.console(h.handlePassword)))
	m.HandleFunc("GET /account/sessions", h.console(h.handleSessionsPage))
	m.HandleFunc("GET "+activityPath, h.console(h.handleActivityPage))
	m.Handle("POST /account/sessions/revoke", form(h.console(h.handleRevokeSession)))
	m.Handle("POST /account/sessions/revoke-others", form(h.console(h.handleRevokeOtherSessions)))
	m.HandleFunc("GET "+twoFactorPath, h.console(h.handleTwoFactorPage))
	m.Handle("POST "+twoFactorPath+"/totp", form(h.console(h.handleEnrolTOTP)))
	m.Handle("POST "+twoFactorPath+"/confirm", form(h.console(h.handleConfirmTOTP)))
	m.Handle("POST "+twoFactorPath+"/remove", form(h.console(h.handleRemoveFactor)))
	m.Handle("POST "+twoFactorPath+"/recovery-codes", form(h.console(h.handleNewRecoveryCodes)))
	m.Handle("POST "+twoFactorPath+"/recovery-codes.txt", form(h.console(h.handleDownloadCodes)))
	m.HandleFunc("GET /account/apps", h.console(h.handleAppsPage))
	m.Handle("POST /account/apps/disconnect", form(h.console(h.handleDisconnect)))
	m.HandleFunc("GET /account/keys", h.console(h.handleKeysPage))
	m.Handle("POST /account/keys", form(h.console(h.handleCreateKey)))
	m.Handle("POST /account/keys/revoke", form(h.console(h.handleRevokeKey)))
	m.HandleFunc("GET /account/workspaces", h.consoleView("workspaces", h.workspacesPage))
	m.Handle("POST /account/workspaces", form(h.console(h.handleCreateWorkspace)))
	m.Handle("POST /account/workspaces/default", form(h.console(h.handleSwitchDefault)))
	m.Handle("POST /account/workspaces/leave", form(h.console(h.handleLeave)))
	m.HandleFunc("GET /account/delete", h.consoleView("delete", h.deletePage))
	m.Handle("POST /account/delete", form(h.console(h.handleDelete)))
	m.HandleFunc("GET /workspaces/{id}", h.workspaceView("overview", h.overviewPage))
	m.HandleFunc("GET /workspaces/{id}/settings", h.workspaceView("orgsettings", h.orgSettingsPage))
	m.Handle("POST /workspaces/{id}/settings", form(h.inWorkspace(h.handleOrgSettings)))
	m.Handle("POST /workspaces/{id}/settings/two-factor", form(h.console(h.handleOrgTwoFactor)))
	m.Handle("POST /workspaces/{id}/delete", form(h.inWorkspace(h.handleOrgDelete)))
	m.HandleFunc("GET /workspaces/{id}/audit", h.inWorkspace(h.handleAuditPage))
	m.HandleFunc("GET /workspaces/{id}/audit.csv", h.inWorkspace(h.handleAuditCSV))
	m.HandleFunc("GET /workspaces/{id}/teams", h.workspaceView("teams", h.teamsPage))
	m.Handle("POST /workspaces/{id}/teams", form(h.console(h.handleCreateTeam)))
	m.Handle("POST /workspaces/{id}/teams/delete", form(h.console(h.handleDeleteTeam)))
	m.HandleFunc("GET /workspaces/{id}/teams/{team}", h.workspaceView("team", h.teamPage))
	m.Handle("POST /workspaces/{id}/teams/{team}", form(h.console(h.handleUpdateTeam)))
	m.Handle("POST /workspaces/{id}/teams/{team}/members", form(h.console(h.handleTeamMember)))
	m.Handle("POST /workspaces/{id}/teams/{team}/remove", form(h.console(h.handleTeamRemove)))
	m.HandleFunc("GET /workspaces/{id}/keys", h.inWorkspace(h.handleOrgKeysPage))
	m.Handle("POST /workspaces/{id}/keys", form(h.console(h.handleCreateOrgKey)))
	m.Handle("POST /workspaces/{id}/keys/revoke", form(h.console(h.handleRevokeOrgKey)))
	m.HandleFunc("GET /workspaces/{id}/scim", h.inWorkspace(h.handleSCIMPage))
	m.Handle("POST /workspaces/{id}/scim", form(h.console(when(h.scim != nil, h.handleCreateSCIMToken))))
	m.Handle("POST /workspaces/{id}/scim/delete", form(h.console(when(h.scim != nil, h.handleDeleteSCIMToken))))
	m.Handle("POST /workspaces/{id}/scim/settings", form(h.console(when(h.scim != nil, h.handleSCIMSettings))))
	m.HandleFunc("GET /workspaces/{id}/sso", h.workspaceView("sso", h.ssoListPage))
	for _, proto := range []string{sso.ProtocolOIDC, sso.ProtocolSAML} {
		m.HandleFunc("GET /workspaces/{id}/sso/new/"+proto, h.workspaceView("ssoform", h.ssoNewPage))
		m.Handle("POST /workspaces/{id}/sso/new/"+proto, h.bigForm(h.console(when(h.sso != nil, h.handleSSOCreate))))
	}
	m.HandleFunc("GET /workspaces/{id}/sso/{conn}", h.inWorkspace(h.handleSSOConnPage))
	m.Handle("POST /workspaces/{id}/sso/{conn}", h.bigForm(h.console(when(h.sso != nil, h.handleSSOUpdate))))
	m.Handle("POST /workspaces/{id}/sso/{conn}/delete", form(h.console(when(h.sso != nil, h.handleSSODelete))))
	m.HandleFunc("GET /workspaces/{id}/applications", h.inWorkspace(h.handleOrgAppsPage))
	m.Handle("POST /workspaces/{id}/applications", form(h.console(h.handleCreateOrgApp)))
	m.HandleFunc("GET /workspaces/{id}/applications/{app}", h.inWorkspace(h.handleOrgAppPage))
	m.Handle("POST /workspaces/{id}/applications/{app}/{action}", form(h.console(h.handleOrgAppAction)))
	m.HandleFunc("GET /workspaces/{id}/domains", h.workspaceView("domains", h.domainsPage))
	m.Handle("POST /workspaces/{id}/domains", form(h.console(h.handleClaimDomain)))
	m.Handle("POST /workspaces/{id}/domains/{action}", form(h.console(h.handleDomainAction)))
	m.HandleFunc("GET /workspaces/{id}/members", h.workspaceView("members", h.membersPage))
	m.Handle("POST /workspaces/{id}/members/role", form(h.console(h.handleMemberRole)))
	m.Handle("POST /workspaces/{id}/members/remove", form(h.console(h.handleMemberRemove)))
	m.HandleFunc("GET /workspaces/{id}/invitations", h.inWorkspace(h.handleInvitationsPage))
	m.Handle("POST /workspaces/{id}/invitations", form(h.console(h.handleInvite)))
	m.Handle("POST /workspaces/{id}/invitations/revoke", form(h.console(h.handleRevokeInvitation)))
	m.Handle("POST /workspaces/{id}/invitations/resend", form(h.console(h.handleResendInvitation)))
	m.HandleFunc("GET /workspaces/{id}/tools", h.workspaceView("tools", h.toolsPage))
	m.Handle("POST /workspaces/{id}/tools", form(h.console(h.handleSetTool)))
}

// caller is the signed-in user of a console page and the principal the
// page acts as (a full session scoped to the home workspace).
type caller struct {
	b *identity.BrowserSession
	p *gatehouse.Principal
	h *handlers
	// w answers a GET of a page, whose view takes the form kept across
	// signing in again (nil: none taken).
	w http.ResponseWriter
}

// lookup resolves the signed-in user and their principal; nil for an
// anonymous browser.
func (h *handlers) lookup(r *http.Request) (*caller, error) {
	b, err := h.browser(r)
	if err != nil || b == nil {
		return nil, err
	}
	if r.Method == http.MethodGet {
		// The reads a page makes (its lists) need only the user and the
		// session; the home workspace is resolved, in a transaction, for
		// the writes, whose audit entries it names.
		return &caller{b: b, p: browserPrincipal(b), h: h}, nil
	}
	p, err := h.svc.BrowserPrincipal(r.Context(), b)
	if err != nil {
		return nil, err
	}
	return &caller{b: b, p: p, h: h}, nil
}

// caller resolves the console's caller; nil when it has already answered:
// an anonymous GET goes to sign in and comes back, an anonymous POST goes
// to sign in, an error renders the error page.
func (h *handlers) caller(w http.ResponseWriter, r *http.Request) *caller {
	c, err := h.lookup(r)
	switch {
	case err != nil:
		h.pageError(w, r, err)
	case c != nil:
		if r.Method == http.MethodGet {
			c.w = w
		}
		return c
	case r.Method != http.MethodGet:
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
	default:
		signInFirst(w, r, "")
	}
	return nil
}

// consolePage is the page of section nav for c, with the notice the last
// redirect named.
func (c *caller) page(r *http.Request, title, nav string) *page {
	key := r.URL.Query().Get("done")
	var notice string
	if c.h != nil {
		notice = c.h.namedNotice(r, key)
	}
	if notice == "" {
		notice = notices[key]
	}
	p := &page{Title: title, Nav: nav, User: c.b.User, Notice: notice}
	if c.h != nil {
		p.Switcher = c.h.switcher(r, c)
	}
	if c.w != nil && c.h != nil {
		if p.Resume = c.h.takeResume(c.w, r, c.b.User.ID); p.Resume != nil {
			p.Notice = "You signed in again. Check the form below and send it."
		}
	}
	return p
}

// notices are the outcomes a console redirect names (?done=key): fixed
// sentences, so no text of the URL reaches the page; namedNotices are
// those that name the thing the change was about (a format with one %s),
// shown when the name crossed the redirect (doneNamed), sealed in a
// cookie bound to the page and the notice, never in the URL. Each page
// declares its own beside it (pageNotices).
var notices, namedNotices = map[string]string{}, map[string]string{}

// pageNotices are the notices of one page, declared beside it:
//
//	var _ = pageNotices{{Key: "team-deleted", Text: "Team deleted.", Named: "The team %s was deleted."}}.add()
//
// Text is shown after a redirect with ?done=Key; Named, when set, instead
// when the redirect carried the thing's name (a notice with only Named
// says nothing without it).
type pageNotices []struct{ Key, Text, Named string }

// add puts ns among the notices; a key declared twice panics as the
// package starts, so two pages cannot silently claim one outcome.
func (ns pageNotices) add() bool {
	for _, n := range ns {
		_, dup := notices[n.Key]
		if _, dupNamed := namedNotices[n.Key]; dup || dupNamed {
			panic("pages: notice " + n.Key + " declared twice")
		}
		if n.Text != "" {
			notices[n.Key] = n.Text
		}
		if n.Named != "" {
			namedNotices[n.Key] = n.Named
		}
	}
	return true
}

// done redirects (303) to path with the notice key.
func done(w http.ResponseWriter, r *http.Request, path, key string) {
	http.Redirect(w, r, path+"?"+url.Values{"done": {key}}.Encode(), http.StatusSeeOther)
}

// formError places a refusal of the services next to its field: the
// error's Field when the form has it, else above the form. A message that
// opens with the API's name of its field ("new_password must …") names it
// as the form labels it. ok is false for an error that is not a refusal
// (an internal one), which the caller renders as the error page.
func formError(err error, fields ...string) (field, msg string, ok bool) {
	var e *gatehouse.Error
	if !errors.As(err, &e) || e.Kind == gatehouse.KindInternal {
		return "", "", false
	}
	if e.Field != "" && slices.Contains(fields, e.Field) {
		f := e.Field
		if rest, found := strings.CutPrefix(e.Message, f); found && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, ":")) {
			label := fieldLabels[f]
			if label == "" {
				label = f
			}
			return f, sentence(label + rest), true
		}
		return f, sentence(e.Message), true
	}
	return "", sentence(e.Message), true
}

// fieldLabels name the API's fields as the forms label them.
var fieldLabels = map[string]string{"name": "name", "email": "email", "emails": "at least one email address", "password": "password", "avatar_url": "avatar URL",
	"new_password": "new password", "current_password": "current password", "expires_in_days": "expiry", "tools": "tools",
	"slug": "slug", "confirm": "confirmation", "role": "role", "domain": "domain", "mode": "mode",
	"client_name": "name", "redirect_uris": "redirect URIs", "post_logout_redirect_uris": "post-logout redirect URIs",
	"token_endpoint_auth_method": "authentication", "jwks_uri": "JWKS URL", "jwks": "JWKS",
	"id_token_signed_response_alg": "ID token algorithm", "backchannel_logout_uri": "back-channel logout URL", "grace_seconds": "grace",
	"issuer": "issuer", "client_id": "client ID", "client_secret": "client secret", "scopes": "scopes", "default_role": "default role",
	"domains": "domains", "metadata_url": "metadata URL", "metadata_xml": "metadata XML",
	"name_attribute": "name claim", "groups_attribute": "groups claim", "group_teams": "group"}

// refuse shows a refused form again: the message next to its field (or
// above the form), the typed values kept.
func (h *handlers) refuse(w http.ResponseWriter, r *http.Request, name string, p *page, err error, values map[string]string, fields ...string) {
	if h.signInAgain(w, r, err) {
		return
	}
	field, msg, ok := formError(err, fields...)
	if !ok {
		h.pageError(w, r, err)
		return
	}
	p.Values = values
	if field != "" {
		p.Fields = map[string]string{field: msg}
	} else {
		p.Error = msg
	}
	var e *gatehouse.Error
	errors.As(err, &e)
	h.render(w, r, h.k.StatusOf(e.Kind), name, p)
}

// asGet is r as the GET of its page, to build a page again around a
// refused form.
func asGet(r *http.Request) *http.Request {
	get := r.Clone(r.Context())
	get.Method = http.MethodGet
	get.URL = &url.URL{Path: r.URL.Path}
	return get
}
