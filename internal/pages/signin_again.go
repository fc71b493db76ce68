package pages

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
)

// Sign in again, in place (issue 30 item 2). A console form refused
// because the sign-in is too old (gatehouse.CodeReauthRequired) is
// answered by the sign-in form itself, for the same account, returning to
// the form's page; the form's fields wait in a sealed cookie and come back
// on that page as a card ready to send. One mechanism for every page: the
// adapters refuse and pageError call signInAgain.

// cookieResume holds the pending form: "page.sealed", the page's path in
// the clear (so other pages leave it alone) and the form sealed to the
// account and that page, so another account signing in in this browser,
// or another page, cannot open it.
const cookieResume = "gatehouse_resume"

// resumeTTL is how long a pending form waits for the sign-in.
const resumeTTL = 10 * time.Minute

// pendingForm is what the cookie seals: the form's action, its fields but
// the secrets, the secret fields to type again, and its expiry.
type pendingForm struct {
	Action  string     `json:"a"`
	Values  url.Values `json:"v"`
	Secrets []string   `json:"s,omitempty"`
	Until   int64      `json:"u"`
}

// retyped are the secret fields a pending form asks for again rather than
// keep; a form with any other secret (a code, an enrolment's URI) is not
// kept at all: the person starts it again on its page.
var retyped = map[string]string{"current_password": "Current password", "new_password": "New password", "client_secret": "Client secret"}

// maxResumeCookie bounds the pending form's cookie: a browser drops a
// cookie over 4096 bytes, so a longer form (a pasted SAML metadata
// document) is not kept and is started again on its page.
const maxResumeCookie = 3800

// secretField reports whether a form field holds a secret never written
// into a cookie or a page.
func secretField(name string) bool {
	return strings.Contains(name, "password") || strings.Contains(name, "secret") || name == "code" || name == "uri"
}

// resume is the card that sends a pending form again.
type resume struct {
	Action, Text, Button string
	Hidden               []hidden
	Shown                []hidden // the kept values a person recognises, by label
	Secrets              []hidden // Name and Label of the secrets to type again
	values               url.Values
}

// signInAgain answers a console POST refused for an old sign-in with the
// sign-in form for the same account (its methods only), keeping the form
// for its page; false when err is no such refusal.
func (h *handlers) signInAgain(w http.ResponseWriter, r *http.Request, err error) bool {
	var e *gatehouse.Error
	if r.Method != http.MethodPost || !errors.As(err, &e) || e.Code != gatehouse.CodeReauthRequired {
		return false
	}
	b, berr := h.browser(r)
	if berr != nil || b == nil {
		return false
	}
	back := formPage(r.URL.Path)
	h.keepForm(w, b.User.ID, back, r.URL.Path, r.PostForm)
	again := &again{HasPassword: b.User.PasswordHash != ""}
	if pks, err := h.svc.ListPasskeys(r.Context(), browserPrincipal(b)); err == nil {
		again.HasPasskey = len(pks) > 0
	}
	h.render(w, r, h.k.StatusOf(e.Kind), "signin", &page{Title: "Sign in again", Next: back, Email: b.User.Email, User: b.User,
		Error: sentence(e.Message), Again: again, Script: passkeyScriptPath,
		Intro: "Then you come back to the page with your form kept, ready to send."})
	return true
}

// again is what the sign-in form shows for signing in again: only the
// methods the account has (a second factor follows as at any sign-in).
type again struct{ HasPassword, HasPasskey bool }

// keepForm seals the refused form of action for the account's next view
// of page; a form holding a secret that cannot be typed again is not kept.
func (h *handlers) keepForm(w http.ResponseWriter, userID, page, action string, form url.Values) {
	f := pendingForm{Action: action, Values: url.Values{}, Until: h.svc.Now().Add(resumeTTL).Unix()}
	for name, vs := range form {
		if !secretField(name) {
			f.Values[name] = vs
			continue
		}
		if retyped[name] == "" {
			return
		}
		f.Secrets = append(f.Secrets, name)
	}
	plain, err := json.Marshal(f)
	if err != nil {
		return
	}
	sealed := h.shown.Seal(plain, resumeContext(userID, page))
	value := base64.RawURLEncoding.EncodeToString([]byte(page)) + "." + base64.RawURLEncoding.EncodeToString(sealed)
	if len(value) > maxResumeCookie {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: h.hostCookie(cookieResume),
		Value: value,
		Path:  h.showOncePath(page), MaxAge: int(resumeTTL / time.Second), HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
}

// takeResume reads and deletes the pending form of the page at r's path
// for the account userID; nil when there is none, it is another page's,
// another account's, or expired.
func (h *handlers) takeResume(w http.ResponseWriter, r *http.Request, userID string) *resume {
	ck, err := r.Cookie(h.hostCookie(cookieResume))
	if err != nil {
		return nil
	}
	enc, sealedEnc, _ := strings.Cut(ck.Value, ".")
	page, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || string(page) != r.URL.Path {
		return nil
	}
	http.SetCookie(w, &http.Cookie{Name: h.hostCookie(cookieResume), Path: h.showOncePath(string(page)), MaxAge: -1, HttpOnly: true,
		Secure: h.secure, SameSite: http.SameSiteStrictMode})
	sealed, err := base64.RawURLEncoding.DecodeString(sealedEnc)
	if err != nil {
		return nil
	}
	plain, err := h.shown.Open(sealed, resumeContext(userID, string(page)))
	if err != nil {
		return nil
	}
	var f pendingForm
	if json.Unmarshal(plain, &f) != nil || h.svc.Now().Unix() > f.Until || formPage(f.Action) != string(page) {
		return nil
	}
	return newResume(f)
}

// resumeContext binds a pending form to the account and its page.
func resumeContext(userID, page string) []byte {
	return []byte("resume\x00" + userID + "\x00" + page)
}

// newResume is the card of f.
func newResume(f pendingForm) *resume {
	text, button := resumeWords(f.Action)
	res := &resume{Action: f.Action, Text: text, Button: button, values: f.Values}
	for name, vs := range f.Values {
		for _, v := range vs {
			res.Hidden = append(res.Hidden, hidden{name, v})
		}
		if label := fieldLabels[name]; label != "" && len(vs) == 1 && vs[0] != "" {
			res.Shown = append(res.Shown, hidden{strings.ToUpper(label[:1]) + label[1:], vs[0]})
		}
	}
	sortHidden(res.Hidden)
	sortHidden(res.Shown)
	for _, name := range f.Secrets {
		res.Secrets = append(res.Secrets, hidden{name, retyped[name]})
	}
	sortHidden(res.Secrets)
	return res
}

// formPage is the page a console form is on, from its action: where
// signing in again returns.
func formPage(action string) string {
	switch action {
	case "/account/profile", "/account/email", "/account/password", "/account/verify-email":
		return "/account"
	case passkeyAddPath:
		return "/account/passkeys"
	}
	if org, ok := strings.CutSuffix(action, "/delete"); ok && strings.HasPrefix(action, "/workspaces/") && strings.Count(action, "/") == 3 {
		return org + "/settings"
	}
	if strings.HasPrefix(action, "/workspaces/") && strings.Count(action, "/") == 5 && strings.Contains(action, "/applications/") {
		return action[:strings.LastIndex(action, "/")]
	}
	for _, suffix := range []string{"/revoke-others", "/revoke", "/remove", "/totp", "/confirm", "/recovery-codes", "/delete", "/members"} {
		if p, ok := strings.CutSuffix(action, suffix); ok && p != "/account" {
			return p
		}
	}
	return action
}

// resumeWords say what a pending form does and label its button, by the
// form's action (workspace forms by their last segments).
func resumeWords(action string) (text, button string) {
	key := action
	if strings.HasPrefix(action, "/workspaces/") {
		parts := strings.Split(action, "/")
		key = "/workspaces/{id}/" + strings.Join(parts[3:], "/")
		if len(parts) == 6 && parts[3] == "applications" {
			key = "/workspaces/{id}/applications/{app}/" + parts[5]
		}
		if len(parts) == 6 && parts[3] == "sso" && parts[4] != "new" {
			key = "/workspaces/{id}/sso/{conn}/" + parts[5]
		}
	}
	if w, ok := resumeTexts[key]; ok {
		return w[0], w[1]
	}
	return "Send the form you started again.", "Send"
}

// resumeTexts are the words of resumeWords.
var resumeTexts = map[string][2]string{
	"/account/password":                          {"Type your passwords again to save the new one; the rest of the form is kept.", "Save password"},
	"/account/email":                             {"Send the confirmation link to your new address.", "Send a confirmation link"},
	"/account/delete":                            {"Delete your account, as you asked.", "Delete my account"},
	"/account/keys":                              {"Create the personal API key you filled in.", "Create key"},
	"/account/keys/revoke":                       {"Revoke the personal API key you chose.", "Revoke key"},
	"/account/sessions/revoke":                   {"Sign out the session you chose.", "Sign out the session"},
	"/account/sessions/revoke-others":            {"Sign out every other session.", "Sign out other sessions"},
	"/account/passkeys/remove":                   {"Remove the passkey you chose.", "Remove passkey"},
	passkeyAddPath:                               {"Add the passkey you named: your device asks for its screen lock or security key.", "Add a passkey"},
	"/account/two-factor/totp":                   {"Set up an authenticator app.", "Set up an authenticator app"},
	"/account/two-factor/remove":                 {"Turn off the authenticator app.", "Turn off the authenticator app"},
	"/account/two-factor/recovery-codes":         {"Make new recovery codes; the old ones stop working.", "Make new recovery codes"},
	"/workspaces/{id}/keys":                      {"Create the workspace API key you filled in.", "Create key"},
	"/workspaces/{id}/keys/revoke":               {"Revoke the workspace API key you chose.", "Revoke key"},
	"/workspaces/{id}/applications":              {"Register the application you filled in.", "Register application"},
	"/workspaces/{id}/applications/{app}/secret": {"Make a new secret for the application.", "Make a new secret"},
	"/workspaces/{id}/applications/{app}/delete": {"Delete the application.", "Delete application"},
	"/workspaces/{id}/sso/new/oidc":              {"Add the OpenID Connect connection you filled in: type its client secret again.", "Add connection"},
	"/workspaces/{id}/sso/new/saml":              {"Add the SAML connection you filled in.", "Add connection"},
	"/workspaces/{id}/sso/{conn}/delete":         {"Delete the SSO connection.", "Delete connection"},
}
