package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// handleSignUpPage handles "GET /signup"; a signed-in browser goes on to
// the console.
func (h *handlers) handleSignUpPage(w http.ResponseWriter, r *http.Request) error {
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	if b != nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return nil
	}
	h.render(w, r, http.StatusOK, "signup", h.signUpPage(r.URL.Query().Get("next")))
	return nil
}

// signUpPage is the sign-up form with its password rules.
func (h *handlers) signUpPage(next string) *page {
	return &page{Title: "Create your account", Next: safeNext(next), Data: passwordRules()}
}

// passwordRules are the rules a new password must meet, as the form shows them.
func passwordRules() map[string]int {
	return map[string]int{"Min": identity.MinPassword}
}

// handleSignUp handles "POST /signup": email, password and name. It
// registers the account, signs it in and lands on the console; the 409 of
// a taken address is explained with the ways back in.
func (h *handlers) handleSignUp(w http.ResponseWriter, r *http.Request) {
	values := map[string]string{"email": r.PostFormValue("email"), "name": r.PostFormValue("name")}
	p := h.signUpPage(r.PostFormValue("next"))
	if h.limited(r, h.register) {
		p.Values, p.Error = values, "Too many accounts created from here. Wait a minute and try again."
		h.render(w, r, http.StatusTooManyRequests, "signup", p)
		return
	}
	si, err := h.svc.Register(r.Context(), identity.RegisterInput{Email: values["email"], Password: r.PostFormValue("password"),
		Name: values["name"]}, h.k.SessionMeta(r))
	if gatehouse.ErrorKind(err) == gatehouse.KindConflict {
		// The sign-in and recovery pages the error links to take the
		// address with them, sealed in a show-once cookie: never in
		// their URLs, where logs and history would keep it.
		h.showOnce(w, "/signin", prefillID, values["email"])
		h.showOnce(w, "/recover", prefillID, values["email"])
		p.Values, p.Email = values, values["email"]
		p.Fields = map[string]string{"email": "An account with this email address already exists."}
		h.render(w, r, http.StatusConflict, "signup", p)
		return
	}
	if err != nil {
		h.refuse(w, r, "signup", p, err, values, "email", "password", "name")
		return
	}
	h.signedIn(w, r, si, p.Next)
}
