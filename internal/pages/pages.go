// Package pages serves Gatehouse's hosted pages: sign-in and sign-out,
// magic links, password recovery, email confirmation, invitations, OAuth
// consent and device approval, and the Forms destination confirmation.
// They are server-rendered with html/template (templates/, embedded),
// carry one small stylesheet and no JavaScript but the passkey script
// (passkey.js, on the sign-in, second-step, reset and passkeys pages, which work without it); every page has a strict
// Content-Security-Policy and refuses framing, and every form POST passes
// a cross-origin check (form.go). One file per page action.
package pages

import (
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/scim"
	"github.com/gatehouse/gatehouse/internal/seal"
	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/web"
	"github.com/gatehouse/gatehouse/internal/workspace"

	"golang.org/x/text/language"
)

// Kernel is what the pages need from the HTTP kernel (internal/web).
type Kernel interface {
	// Limiter is the abuse limiter called name (nil, which allows
	// everything, when limits are off); the API endpoint a page stands
	// beside asks for the same name, so both share its buckets.
	Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter
	// ClientIP is the address the abuse limits key on.
	ClientIP(r *http.Request) string
	// SessionMeta is what a session records of the request that opens it.
	SessionMeta(r *http.Request) gatehouse.SessionMeta
	// RequestID is the id the kernel gave r, shown on the error page and
	// logged with its cause.
	RequestID(r *http.Request) string
	// StatusOf is the HTTP status of an error kind, from the kernel's one
	// table, so a page answers what the API answers.
	StatusOf(kind gatehouse.Kind) int
}

// Deps are the services the pages call.
type Deps struct {
	Identity  *identity.Service
	Workspace *workspace.Service // invitations
	// OAuth is the authorization server; nil leaves out the consent and
	// device pages. Its issuer (GATEHOUSE_BASE_URL) also decides whether
	// cookies can be Secure.
	OAuth *oauth.Server
	// Forms is the Forms tool; nil leaves out its destination
	// confirmation page.
	Forms *forms.Service
	// SCIM is the provisioning service; nil leaves out the workspace's
	// SCIM tokens page.
	SCIM *scim.Service
	// SSO is single sign-on and social sign-in; nil leaves out the
	// provider buttons, home-realm discovery and the linked sign-ins page.
	SSO    *sso.Service
	Brand  Brand        // the operator's branding (GATEHOUSE_BRAND_*)
	Logger *slog.Logger // nil: slog.Default()
	// Shown seals the secrets shown once (flash.go) under the server's
	// master key, so that any instance can open what another sealed; nil:
	// a key of this process only (tests with one instance).
	Shown *seal.Box
}

// Mux is where the pages mount: the kernel's page router, which tells the
// API document's checks that these routes are pages.
type Mux interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// Mount serves the hosted pages on m; every form POST goes through
// h.form (cross-origin and field checks).
func Mount(m Mux, k Kernel, d Deps) {
	h := newHandlers(k, d)
	m = langMux{m}
	form := h.form
	m.HandleFunc("GET /signin", h.flow(h.handleSignInPage))
	m.Handle("POST /signin", form(h.flow(h.handleSignIn)))
	m.Handle("POST /signin/magic", form(h.flow(h.handleSignInMagic)))
	m.HandleFunc("GET "+stepPath, h.flow(h.handleStepPage))
	m.Handle("POST "+stepPath, form(h.flow(h.handleStep)))
	m.Handle("POST /signout", form(h.flow(h.handleSignOut)))
	m.HandleFunc("GET /auth/magic", h.handleMagicPage)
	m.Handle("POST /auth/magic", form(h.flow(h.handleMagic)))
	m.HandleFunc("GET /verify-email", h.handleVerifyEmailPage)
	m.Handle("POST /verify-email", form(h.flow(h.handleVerifyEmailForm)))
	m.HandleFunc("GET "+identity.ChangeEmailPath, h.handleEmailChangePage)
	m.Handle("POST "+identity.ChangeEmailPath, form(h.flow(h.handleEmailChange)))
	m.HandleFunc("GET "+identity.UndoEmailPath, h.handleEmailUndoPage)
	m.Handle("POST "+identity.UndoEmailPath, form(h.flow(h.handleEmailUndo)))
	m.HandleFunc("GET /recover", h.handleRecoverPage)
	m.Handle("POST /recover", form(h.flow(h.handleRecover)))
	m.HandleFunc("GET /reset-password", h.flow(h.handleResetPage))
	m.Handle("POST /reset-password", form(h.flow(h.handleReset)))
	m.Handle("POST /reset-password/passkey/begin", h.csrf.Handler(http.HandlerFunc(h.handleResetPasskeyBegin)))
	m.Handle("POST /reset-password/passkey", h.csrf.Handler(http.HandlerFunc(h.handleResetPasskey)))
	m.HandleFunc("GET /invite", h.flow(h.handleInvitePage))
	m.Handle("POST /invite", form(h.flow(h.handleInviteAccept)))
	m.HandleFunc("GET /assets/gatehouse.css", handleAsset("text/css; charset=utf-8", stylesheet))
	m.HandleFunc("GET /assets/brand.css", handleAsset("text/css; charset=utf-8", h.brand.css()))
	m.HandleFunc("GET /assets/favicon.svg", handleAsset("image/svg+xml", favicon))
	m.HandleFunc("GET /favicon.ico", handleAsset("image/svg+xml", favicon))
	m.HandleFunc("GET "+copyScriptPath, handleAsset("text/javascript; charset=utf-8", copyScript))
	m.HandleFunc("GET "+confirmScriptPath, handleAsset("text/javascript; charset=utf-8", confirmScript))
	mountConsole(m, h)
	m.HandleFunc("GET "+passkeyScriptPath, handlePasskeyScript)
	m.Handle("POST /signin/passkey", h.csrf.Handler(http.HandlerFunc(h.handleSignInPasskey)))
	m.Handle("POST "+stepPath+"/passkey/begin", h.csrf.Handler(http.HandlerFunc(h.handleStepPasskeyBegin)))
	m.Handle("POST "+stepPath+"/passkey", h.csrf.Handler(http.HandlerFunc(h.handleStepPasskey)))
	m.HandleFunc("GET /account/passkeys", h.consoleView("passkeys", h.passkeysPage))
	m.Handle("POST "+passkeyAddPath, h.form(h.console(h.handleAccountPasskeyAdd)))
	m.Handle("POST /account/passkeys/begin", h.csrf.Handler(http.HandlerFunc(h.handleAccountPasskeyBegin)))
	m.Handle("POST /account/passkeys/finish", h.csrf.Handler(http.HandlerFunc(h.handleAccountPasskeyFinish)))
	m.Handle("POST /account/passkeys/remove", form(h.console(h.handleAccountPasskeyRemove)))
	m.Handle("POST /account/passkeys/rename", form(h.console(h.handleAccountPasskeyRename)))
	if h.oauth != nil {
		m.HandleFunc("GET /oauth/authorize", h.flow(h.handleAuthorize))
		m.Handle("POST /oauth/authorize", form(h.flow(h.handleAuthorizeDecision)))
		m.HandleFunc("GET /device", h.flow(h.handleDevicePage))
		m.Handle("POST /device", form(h.flow(h.handleDeviceDecision)))
		m.HandleFunc("GET "+logoutPath, h.flow(h.handleLogout))
		m.HandleFunc("POST "+logoutPath, h.flow(h.handleLogout))
		m.Handle("POST "+logoutConfirmPath, form(h.flow(h.handleLogoutConfirm)))
	}
	if h.sso != nil {
		m.Handle("POST /signin/sso", form(h.handleSignInSSO))
		m.HandleFunc("GET "+sso.LinkPath, h.flow(h.handleLinkPage))
		m.Handle("POST "+sso.LinkPath, form(h.flow(h.handleLink)))
		m.HandleFunc("GET /account/identities", h.consoleView("identities", h.identitiesPage))
		m.Handle("POST /account/identities/unlink", form(h.console(h.handleUnlinkIdentity)))
	}
	if h.forms != nil {
		m.HandleFunc("GET /forms"+forms.ConfirmPath, h.handleFormConfirmPage)
		m.Handle("POST /forms"+forms.ConfirmPath, form(h.flow(h.handleFormConfirm)))
	}
}

// handlers are the page handlers and what they share.
type handlers struct {
	k         Kernel
	svc       *identity.Service
	ws        *workspace.Service
	oauth     *oauth.Server
	forms     *forms.Service
	scim      *scim.Service
	sso       *sso.Service
	log       *slog.Logger
	brand     Brand
	imgSrc    string                                         // the CSP's img-src: 'self' and an external logo's origin
	templates map[language.Tag]map[string]*template.Template // by language
	secure    bool                                           // Secure cookies; false only on plain-http loopback
	csrf      *http.CrossOriginProtection
	shown     *seal.Box // seals the show-once cookie
	// The abuse limits (docs/decisions.md gives the numbers' reasons):
	// login, magic, recover and verify are shared with the API endpoints
	// of the same names (the per-address ones are the service's); failedDeviceCodes counts wrong user codes on the
	// device page per IP and per browser session (RFC 8628 §5.1).
	register, login, magic, recover, verify, passkey, failedDeviceCodes *ratelimit.Limiter
}

// newHandlers builds the pages' shared state: templates, the cookie
// policy, the cross-origin guard and the limiters.
func newHandlers(k Kernel, d Deps) *handlers {
	h := &handlers{k: k, svc: d.Identity, ws: d.Workspace, oauth: d.OAuth, forms: d.Forms, scim: d.SCIM, sso: d.SSO, log: d.Logger,
		brand: d.Brand.withDefaults(), imgSrc: "'self'",
		templates: map[language.Tag]map[string]*template.Template{i18n.English: parseTemplates(i18n.English), i18n.German: parseTemplates(i18n.German)}, secure: true, csrf: http.NewCrossOriginProtection(), shown: d.Shown,
		register:          identity.LimitRegister.From(k),
		login:             identity.LimitLogin.From(k),
		magic:             identity.LimitMagic.From(k),
		recover:           identity.LimitRecover.From(k),
		verify:            identity.LimitVerify.From(k),
		passkey:           identity.LimitPasskey.From(k),
		failedDeviceCodes: k.Limiter("failedDeviceCodes", 10, time.Minute),
	}
	if o := h.brand.logoOrigin(); o != "" {
		h.imgSrc += " " + o
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.shown == nil {
		h.shown = processBox()
	}
	if h.oauth != nil {
		h.secure = web.SecureCookies(h.oauth.Issuer())
	}
	h.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusForbidden, "error", &page{Title: "Request refused",
			Message: "This form was sent from another site. Go back to the page and try again."})
	}))
	return h
}

// limited takes a token of l for the client's IP and reports whether
// there was none.
func (h *handlers) limited(r *http.Request, l *ratelimit.Limiter) bool {
	ok, _ := l.Allow(h.k.ClientIP(r))
	return !ok
}
