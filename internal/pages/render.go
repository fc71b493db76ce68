package pages

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/workspace"

	"golang.org/x/text/language"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/gatehouse.css
var stylesheet []byte

//go:embed assets/favicon.svg
var favicon []byte

//go:embed assets/copy.js
var copyScript []byte

// copyScriptPath serves copyScript, the copy buttons' script.
const copyScriptPath = "/assets/copy.js"

//go:embed assets/confirm.js
var confirmScript []byte

// confirmScriptPath serves confirmScript, which shows the confirmation
// step of a form marked data-confirm as a dialog (confirm.go).
const confirmScriptPath = "/assets/confirm.js"

// confirmPages are the pages whose lists carry forms marked data-confirm:
// they load confirmScript.
var confirmPages = map[string]bool{"keys": true, "sessions": true, "passkeys": true, "identities": true, "workspaces": true,
	"members": true, "teams": true, "domains": true, "orgkeys": true, "scim": true, "ssoform": true, "twofactor": true}

var pageNames = []string{"error", "message", "signin", "confirm", "consent", "device", "invite", "recover", "reset",
	"signup", "home", "profile", "sessions", "apps", "keys", "workspaces", "delete", "members", "invitations", "tools", "passkeys",
	"overview", "orgsettings", "audit", "teams", "team", "orgkeys", "domains", "mfa", "twofactor", "orgapps", "orgapp", "logout", "scim", "confirmstep", "identities", "ssocontinue", "linkconfirm", "sso", "ssoform", "activity"}

// parseTemplates parses each page with the layout it fills, once per
// language: the set of lang has its words (t, tf) and dates in lang.
func parseTemplates(lang language.Tag) map[string]*template.Template {
	out := map[string]*template.Template{}
	funcs := template.FuncMap{"navItems": func() []navItem { return consoleNav },
		// field's label and hint are catalogue keys.
		"field": func(p *page, name, label, hint string) formField {
			if hint != "" {
				hint = i18n.T(lang, hint)
			}
			return formField{p, name, i18n.T(lang, label), hint}
		}}
	for k, f := range langFuncs(lang) {
		funcs[k] = f
	}
	for _, name := range pageNames {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/orgnav.html", "templates/keyparts.html", "templates/"+name+".html"))
	}
	return out
}

// langFuncs are the templates' words and dates in lang: {{t "Sign in"}},
// {{tf "Signed in as %s" .Email}}, {{date .CreatedAt}}, {{datetime .At}},
// {{datetimesec .At}} and {{lang}} (the <html lang>).
func langFuncs(lang language.Tag) template.FuncMap {
	return template.FuncMap{
		"t":           func(key string) template.HTML { return escapeText(i18n.T(lang, key)) },
		"tf":          func(key string, args ...any) template.HTML { return escapeText(i18n.Tf(lang, key, args...)) },
		"tfb":         func(key string, args ...any) template.HTML { return boldArgs(lang, key, args) },
		"tfs":         func(key string, args ...any) string { return i18n.Tf(lang, key, args...) }, // an argument of another func
		"date":        func(t time.Time) string { return i18n.Date(lang, t) },
		"datetime":    func(t time.Time) string { return i18n.DateTime(lang, t) },
		"datetimesec": func(t time.Time) string { return i18n.DateTimeSeconds(lang, t) },
		"lang":        func() string { return lang.String() },
		"join":        strings.Join,
		"languages":   func() []languageChoice { return languageChoices },
		"term":        func(word string) string { return i18n.Term(lang, word) }, // a role, a tool, a workspace's kind
		"plural":      func(n int, one, other string) template.HTML { return escapeText(i18n.Plural(lang, n, one, other)) },
	}
}

// languageChoice is a language a person may prefer, named in itself.
type languageChoice struct{ Code, Name string }

// languageChoices are the account page's languages besides "Automatic".
var languageChoices = []languageChoice{{"en", "English"}, {"de", "Deutsch"}}

// textEscaper escapes a catalogue sentence for HTML text and attribute
// values; unlike html/template's own escaping it leaves apostrophes as
// they are, so a page reads byte for byte as before the catalogue.
var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;")

// escapeText is s, escaped, as HTML the templates insert as it is.
func escapeText(s string) template.HTML { return template.HTML(textEscaper.Replace(s)) }

// boldArgs is key in lang with each argument escaped and in <strong>: a
// sentence that names things in bold ({{tfb "Continue only if you trust
// %s." .Host}}).
func boldArgs(lang language.Tag, key string, args []any) template.HTML {
	strong := make([]any, len(args))
	for i, a := range args {
		strong[i] = template.HTML("<strong>" + textEscaper.Replace(fmt.Sprint(a)) + "</strong>")
	}
	format := textEscaper.Replace(i18n.T(lang, key))
	return template.HTML(i18n.Tf(lang, format, strong...))
}

// langOf is the language of r's pages: the signed-in person's preference
// once browser has read it, else the browser's Accept-Language.
func langOf(r *http.Request) language.Tag { return i18n.From(r.Context()) }

// tr is key (an English sentence, a fmt format with args) in r's language.
func tr(r *http.Request, key string, args ...any) string { return i18n.Tf(langOf(r), key, args...) }

// formField is one field of a form template ("appfield", "appbox"): the
// page, for the value and error, and the field's name, label and hint.
type formField struct {
	P                 *page
	Name, Label, Hint string
}

// page is the data every template gets.
type page struct {
	Title   string
	Error   string
	Message string
	Next    string
	User    *gatehouse.User
	// Page-specific fields.
	Email, Intro, Token, Action, Button, Code, ClientName, ClientHost, SignIn string
	Hidden                                                                    []hidden
	Orgs                                                                      []orgChoice
	Invite                                                                    *workspace.InvitationPreview
	// Brand is the operator's branding, set by render.
	Brand Brand
	// Nav is the console section of a signed-in console page ("" on the
	// flow pages, which show no console navigation).
	Nav string
	// Notice is the outcome of the form just sent (after its redirect).
	Notice string
	// Fields are the messages next to the fields they are about; Values
	// the typed values shown again (never a password).
	Fields, Values map[string]string
	// Data is the page's own data (console pages).
	Data any
	// Switcher is the header's workspace switcher (console pages; nil
	// elsewhere).
	Switcher *switcher
	Passkeys []identity.Passkey
	// Social are the social sign-in buttons (sign-in and sign-up pages).
	Social []socialButton
	// Again is the sign-in form's signing in again (signin_again.go);
	// Resume the form kept across it, ready to send on its page.
	Again  *again
	Resume *resume
	// Resend is a check-your-email page's "Send again" (the same form
	// posted again) beside "Back to sign in".
	Resend *resend
	// Script is the page's own script (same origin), "" for none; the
	// CSP then also allows scripts and fetches of this origin. Confirm,
	// set by render for confirmPages, loads confirmScript beside it.
	Script  string
	Confirm bool
	// formTarget is an extra form-action source (the client's redirect
	// origin on consent pages).
	formTarget string
	// imgData allows data: images (the TOTP enrolment's QR code, which
	// the identity service draws as a PNG data: URL).
	imgData bool
}

type hidden struct{ Name, Value string }

// resend is the form a check-your-email page sends again.
type resend struct {
	Action string
	Hidden []hidden
}

type orgChoice struct {
	ID, Name, Kind, Role string
	Checked              bool
	Tools                []string // the tools on in it (consent pages)
	Refused              bool     // the session may not use it (consent pages)
}

// FieldError is the message next to field name.
func (p *page) FieldError(name string) string { return p.Fields[name] }

// Value is the typed value of field name, shown again with its error.
// A form kept across signing in again fills its page's fields too.
func (p *page) Value(name string) string {
	if p.Resume != nil && p.Resume.values.Has(name) {
		return p.Resume.values.Get(name)
	}
	return p.Values[name]
}

// Ticked reports whether value is among the space-separated values kept
// for field name (the boxes of a multiple choice).
func (p *page) Ticked(name, value string) bool {
	if p.Resume != nil && p.Resume.values.Has(name) {
		return slices.Contains(p.Resume.values[name], value)
	}
	for _, v := range strings.Fields(p.Values[name]) {
		if v == value {
			return true
		}
	}
	return false
}

// render writes a page with its security headers, in the language of r
// (the page's person's preference, else the browser's): the templates'
// words, and the page's sentences set in Go, which are the catalogue's
// English keys.
func (h *handlers) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	p.Brand = h.brand
	p.Confirm = confirmPages[name]
	if name == "signin" || name == "signup" {
		p.Social = h.socialButtons(p.Next)
	}
	lang := langOf(r)
	if p.User != nil {
		if t, ok := i18n.Parse(p.User.Language); ok {
			lang = t
		}
	}
	p.translate(lang)
	templates := h.templates[lang]
	if templates == nil {
		templates = h.templates[i18n.English]
	}
	var buf bytes.Buffer
	if err := templates[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		h.log.Error("render page", "page", name, "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString("<!doctype html><title>Error</title><p>Something went wrong.</p>")
	}
	formAction := "'self'"
	if p.formTarget != "" {
		formAction += " " + p.formTarget
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	scripts := ""
	if p.Script != "" || p.Confirm {
		scripts = "; script-src 'self'; connect-src 'self'"
	}
	imgSrc := h.imgSrc
	if p.imgData {
		imgSrc += " data:"
	}
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src "+imgSrc+scripts+"; form-action "+formAction+
		"; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// pageError renders err on the error page with the status its kind maps to.
func (h *handlers) pageError(w http.ResponseWriter, r *http.Request, err error) {
	if h.signInAgain(w, r, err) {
		return
	}
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		}
		p := &page{Title: "Something is not right", Message: sentence(e.Message)}
		// A signed-in browser's error page offers sign-out and the way back
		// to the console, as its other pages do.
		if b, err := h.browser(r); err == nil && b != nil {
			p.User = b.User
		}
		h.render(w, r, h.k.StatusOf(e.Kind), "error", p)
		return
	}
	id := h.k.RequestID(r)
	h.log.Error("page internal error", "request_id", id, "path", r.URL.Path, "err", err)
	h.render(w, r, http.StatusInternalServerError, "error", &page{Title: "Something went wrong",
		Message: tr(r, "%s could not finish this request (request id %s). Try again in a moment.", h.brand.Name, id)})
}

// tooMany renders the error page of a form refused by an abuse limit.
func (h *handlers) tooMany(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusTooManyRequests, "error", &page{Title: "Too many attempts", Message: "Wait a moment and try again."})
}

// sentence turns an error message of the API into a sentence for a page.
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
