package pages

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// What cannot be undone (issue 30 item 3): leaving a workspace, removing
// a member, revoking a key, a session or a passkey, deleting a team or a
// domain claim, turning off two-factor. Each list's button posts its form
// as before; the handler answers a post without confirm=yes with a page
// that names the thing and carries the form's fields and confirm=yes (no
// script needed), so a post that skips the step changes nothing. After
// the change a notice names what happened (a pageNotices entry's Named,
// through doneNamed).

// confirmField is the field only the confirmation page sets.
const confirmField = "confirm"

// confirmStep is what a confirmation page says: its title, the sentence
// naming the thing, the button, and the page to go back to.
type confirmStep struct {
	Title, Message, Button, Back string
}

// confirmed reports whether r is the confirmation page's post; otherwise
// it shows that page, carrying r's fields, and returns false.
func (h *handlers) confirmed(w http.ResponseWriter, r *http.Request, c *caller, nav string, s confirmStep) bool {
	if r.PostFormValue(confirmField) == "yes" {
		return true
	}
	p := c.page(r, s.Title, nav)
	p.Notice = ""
	p.Message, p.Button, p.Next, p.Action = s.Message, s.Button, s.Back, r.URL.Path
	keys := make([]string, 0, len(r.PostForm))
	for k := range r.PostForm {
		if k != confirmField {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.PostForm[k] {
			p.Hidden = append(p.Hidden, hidden{k, v})
		}
	}
	h.render(w, r, http.StatusOK, "confirmstep", p)
	return false
}

// cookieNotice holds the name of a named notice across its redirect.
const cookieNotice = "gatehouse_notice"

// doneNamed is done with the name of the thing for the notice of key.
func (h *handlers) doneNamed(w http.ResponseWriter, r *http.Request, path, key, name string) {
	sealed := h.shown.Seal([]byte(name), noticeContext(path, key))
	http.SetCookie(w, &http.Cookie{Name: h.hostCookie(cookieNotice), Value: base64.RawURLEncoding.EncodeToString(sealed),
		Path: "/", MaxAge: 60, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
	done(w, r, path, key)
}

// namedNotice is the notice of key on the page of r naming the thing, ""
// when the cookie is missing or was sealed for another page or notice.
func (h *handlers) namedNotice(r *http.Request, key string) string {
	format, ok := namedNotices[key]
	if !ok {
		return ""
	}
	ck, err := r.Cookie(h.hostCookie(cookieNotice))
	if err != nil {
		return ""
	}
	sealed, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil {
		return ""
	}
	name, err := h.shown.Open(sealed, noticeContext(r.URL.Path, key))
	if err != nil {
		return ""
	}
	return fmt.Sprintf(format, string(name))
}

// noticeContext binds a sealed notice name to its page and notice.
func noticeContext(path, key string) []byte { return []byte("notice\x00" + path + "\x00" + key) }

// personName is how a confirmation names a person: name and address.
func personName(p workspace.PersonRow) string {
	if p.Name == "" || p.Name == p.Email {
		return p.Email
	}
	return p.Name + " (" + p.Email + ")"
}

// passkeyName is how a confirmation names a passkey.
func passkeyName(pk identity.Passkey) string {
	if pk.Name == "" {
		return "without a name"
	}
	return "“" + pk.Name + "”"
}
