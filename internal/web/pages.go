package web

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
)

// The hosted pages: server-rendered with html/template, no JavaScript,
// one small stylesheet. Every page carries a strict Content-Security-Policy
// and refuses framing; every form POST passes http.CrossOriginProtection.

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets.css
var stylesheet []byte

var pageNames = []string{"error", "message", "signin", "confirm", "consent", "device", "invite"}

func parsePages() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		out[name] = template.Must(template.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

// page is the data every template gets.
type page struct {
	Title   string
	Error   string
	Message string
	Next    string
	User    *accounts.User
	// Page-specific fields.
	Email, Intro, Token, Action, Button, Code, ClientName, ClientHost, SignIn string
	Hidden                                                                    []hidden
	Orgs                                                                      []orgChoice
	Invite                                                                    *accounts.InvitationPreview
	// formTarget is an extra form-action source (the client's redirect
	// origin on consent pages).
	formTarget string
}

type hidden struct{ Name, Value string }

type orgChoice struct {
	ID, Name, Kind, Role string
	Checked              bool
}

// render writes a page with its security headers.
func (s *Server) render(w http.ResponseWriter, status int, name string, p *page) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		s.log.Error("render page", "page", name, "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString("<!doctype html><title>Error</title><p>Something went wrong.</p>")
	}
	formAction := "'self'"
	if p.formTarget != "" {
		formAction += " " + p.formTarget
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action "+formAction+
		"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// pageError renders err on the error page with the status its kind maps to.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		}
		s.render(w, statusOf[e.Kind], "error", &page{Title: "Something is not right", Message: sentence(e.Message)})
		return
	}
	s.log.Error("page internal error", "request_id", requestID(r.Context()), "path", r.URL.Path, "err", err)
	s.render(w, http.StatusInternalServerError, "error", &page{Title: "Something went wrong",
		Message: "Gatehouse could not finish this request (request id " + requestID(r.Context()) + "). Try again in a moment."})
}

func sentence(s string) string {
	if s == "" {
		return s
	}
	// A message that opens with a parameter name (code_challenge_method,
	// redirect_uri) keeps it as the client sent it.
	if first, _, _ := strings.Cut(s, " "); !strings.Contains(first, "_") {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// handleStylesheet handles "GET /assets/gatehouse.css".
func (s *Server) handleStylesheet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(stylesheet)
}

// The browser session is a cookie holding the refresh token of a sign-in
// session, resolved without rotating it; the database keeps only its hash.
const (
	cookieSecure   = "__Host-gatehouse_session"
	cookieInsecure = "gatehouse_session"
	cookieNext     = "gatehouse_next"
)

// secureCookies is false only for a base URL on plain http at a loopback
// host (development and tests): browsers drop Secure cookies there.
func secureCookies(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "http" {
		return true
	}
	h := u.Hostname()
	if h == "localhost" {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}

func (s *Server) sessionCookieName() string {
	if s.secure {
		return cookieSecure
	}
	return cookieInsecure
}

func (s *Server) setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// browser returns the signed-in user of the hosted pages, or nil.
func (s *Server) browser(r *http.Request) (*accounts.BrowserSession, error) {
	c, err := r.Cookie(s.sessionCookieName())
	if err != nil || c.Value == "" {
		return nil, nil
	}
	b, err := s.svc.BrowserUser(r.Context(), c.Value)
	if gatehouse.ErrorKind(err) == gatehouse.KindUnauthorized {
		return nil, nil
	}
	return b, err
}

// signedIn starts the browser session of a fresh sign-in and sends the
// browser on to next.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request, si *accounts.SignIn, next string) {
	s.setCookie(w, s.sessionCookieName(), si.RefreshToken, 0)
	s.setCookie(w, cookieNext, "", -1)
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

// safeNext is the one check of a return path (the sign-in page's next, the
// magic-link cookie): a parsed path with no scheme or host, no control
// characters (browsers drop tabs and newlines, so "/\t/evil" is "//evil")
// and no backslashes (read as slashes), encoded or not. Anything else lands
// on /signin.
func safeNext(next string) string {
	const landing = "/signin"
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(u.Path, "//") {
		return landing
	}
	for _, s := range []string{next, u.Path} {
		if strings.ContainsRune(s, '\\') || strings.ContainsFunc(s, unicode.IsControl) {
			return landing
		}
	}
	return next
}

// signInFirst sends an anonymous browser to the sign-in page, returning to
// the current URL.
func signInFirst(w http.ResponseWriter, r *http.Request, intro string) {
	q := url.Values{"next": {r.URL.RequestURI()}}
	if intro != "" {
		q.Set("intro", intro)
	}
	http.Redirect(w, r, "/signin?"+q.Encode(), http.StatusSeeOther)
}

func (s *Server) pageLimited(r *http.Request, pick func(*limits) bool) bool {
	return s.limits != nil && !pick(s.limits)
}

// handleSignInPage handles "GET /signin".
func (s *Server) handleSignInPage(w http.ResponseWriter, r *http.Request) {
	b, err := s.browser(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	next := safeNext(r.URL.Query().Get("next"))
	if b != nil && next != "/signin" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	p := &page{Title: "Sign in", Next: next, Intro: introText(r.URL.Query().Get("intro"))}
	if b != nil {
		p.Title, p.User = "Signed in", b.User
	}
	s.render(w, http.StatusOK, "signin", p)
}

// introText maps the few reasons a page sends the user to sign in.
func introText(key string) string {
	switch key {
	case "oauth":
		return "Sign in to connect an application to your Gatehouse account."
	case "device":
		return "Sign in to connect a device to your Gatehouse account."
	case "invite":
		return "Sign in to accept the invitation."
	}
	return ""
}

// handleSignIn handles "POST /signin": email and password.
func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	email, next := r.PostFormValue("email"), safeNext(r.PostFormValue("next"))
	fail := func(status int, msg string) {
		s.render(w, status, "signin", &page{Title: "Sign in", Next: next, Email: email, Error: msg})
	}
	if s.pageLimited(r, func(l *limits) bool { ok, _ := l.login.Allow(clientIP(r)); return ok }) {
		fail(http.StatusTooManyRequests, "Too many attempts. Wait a minute and try again.")
		return
	}
	si, err := s.svc.Login(r.Context(), email, r.PostFormValue("password"), sessionMeta(r))
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
			msg := sentence(e.Message)
			if e.Kind == gatehouse.KindTooMany {
				msg = "Too many failed attempts for this account. Wait a minute, or sign in with an email link."
			}
			fail(statusOf[e.Kind], msg)
			return
		}
		s.pageError(w, r, err)
		return
	}
	s.signedIn(w, r, si, next)
}

// handleSignInMagic handles "POST /signin/magic": mails a sign-in link and
// remembers in a cookie where to continue once it is opened here.
func (s *Server) handleSignInMagic(w http.ResponseWriter, r *http.Request) {
	email, next := r.PostFormValue("email"), safeNext(r.PostFormValue("next"))
	key, display, err := gatehouse.ParseEmail(email)
	if err != nil {
		s.render(w, http.StatusBadRequest, "signin", &page{Title: "Sign in", Next: next, Email: email, Error: sentence(err.(*gatehouse.Error).Message)})
		return
	}
	if s.limits != nil {
		okIP, _ := s.limits.magic.Allow(clientIP(r))
		okMail, _ := s.limits.magicPerEmail.Allow(key)
		if !okIP || !okMail {
			s.render(w, http.StatusTooManyRequests, "signin", &page{Title: "Sign in", Next: next, Email: email,
				Error: "Too many links requested. Wait a few minutes and try again."})
			return
		}
	}
	if err := s.svc.RequestMagicLink(r.Context(), email, "web"); err != nil {
		s.pageError(w, r, err)
		return
	}
	s.setCookie(w, cookieNext, next, int(accounts.MagicLinkTTL/time.Second))
	s.render(w, http.StatusOK, "message", &page{Title: "Check your email",
		Message: "If " + display + " can sign in, a link is on its way. Open it in this browser within 15 minutes to continue."})
}

// handleSignOut handles "POST /signout".
func (s *Server) handleSignOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(s.sessionCookieName()); err == nil && c.Value != "" {
		if err := s.svc.Logout(r.Context(), c.Value); err != nil {
			s.pageError(w, r, err)
			return
		}
	}
	s.setCookie(w, s.sessionCookieName(), "", -1)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// handleMagicPage handles "GET /auth/magic?token=…". It only shows a
// button: mail scanners open links, so the token is consumed on POST.
func (s *Server) handleMagicPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "confirm", &page{Title: "Sign in to Gatehouse", Message: "Continue to sign in with the link from your email.",
		Action: "/auth/magic", Token: r.URL.Query().Get("token"), Button: "Sign in"})
}

// handleMagic handles "POST /auth/magic": consumes the link, starts the
// browser session and continues where the sign-in began.
func (s *Server) handleMagic(w http.ResponseWriter, r *http.Request) {
	if s.pageLimited(r, func(l *limits) bool { ok, _ := l.verify.Allow(clientIP(r)); return ok }) {
		s.render(w, http.StatusTooManyRequests, "error", &page{Title: "Too many attempts", Message: "Wait a moment and try again."})
		return
	}
	si, err := s.svc.VerifyMagicLink(r.Context(), r.PostFormValue("token"), sessionMeta(r))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	next := ""
	if c, err := r.Cookie(cookieNext); err == nil {
		next = c.Value
	}
	s.signedIn(w, r, si, next)
}

// handleVerifyEmailPage handles "GET /verify-email?token=…" (confirm
// button; consumed on POST).
func (s *Server) handleVerifyEmailPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "confirm", &page{Title: "Confirm your email address", Message: "Confirm that this address is yours and that you signed up for Gatehouse. If you did not sign up, close this page: whoever did chose the password.",
		Action: "/verify-email", Token: r.URL.Query().Get("token"), Button: "Confirm my email address"})
}

// handleVerifyEmailForm handles "POST /verify-email".
func (s *Server) handleVerifyEmailForm(w http.ResponseWriter, r *http.Request) {
	if s.pageLimited(r, func(l *limits) bool { ok, _ := l.verify.Allow(clientIP(r)); return ok }) {
		s.render(w, http.StatusTooManyRequests, "error", &page{Title: "Too many attempts", Message: "Wait a moment and try again."})
		return
	}
	u, err := s.svc.VerifyEmail(r.Context(), r.PostFormValue("token"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "message", &page{Title: "Email confirmed", Message: u.Email + " is confirmed. You can close this page."})
}
