package pages

import (
	"net/http"
)

// The account's linked identities (social sign-in, workspace SSO): a
// list with an unlink form per identity (issue 27). Without the SSO
// service the page is not mounted.

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "identity-gone", Named: "%s was unlinked."},
}.add()

// identitiesPage is "GET /account/identities": the caller's linked
// sign-ins, each with its unlink form, and the providers to link.
func (h *handlers) identitiesPage(r *http.Request, c *caller) (*page, error) {
	is, err := h.sso.Identities(r.Context(), c.p)
	if err != nil {
		return nil, err
	}
	p := c.page(r, "Linked sign-ins", "identities")
	p.Data = map[string]any{"Identities": is, "Providers": h.sso.SocialProviders()}
	return p, nil
}

// handleUnlinkIdentity handles "POST /account/identities/unlink", after
// its confirmation step.
func (h *handlers) handleUnlinkIdentity(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PostFormValue("id")
	is, err := h.sso.Identities(r.Context(), c.p)
	if err != nil {
		return err
	}
	name := "this sign-in"
	for _, i := range is {
		if i.ID == id {
			name = i.Label
			if i.Email != "" {
				name += " (" + i.Email + ")"
			}
		}
	}
	if !h.confirmed(w, r, c, "identities", confirmStep{Title: tr(r, "Unlink %s?", name),
		Message: tr(r, "You can no longer sign in to this account with %s.", name), Button: "Unlink", Back: "/account/identities"}) {
		return nil
	}
	if err := h.sso.Unlink(r.Context(), c.p, id); err != nil {
		return err
	}
	h.doneNamed(w, r, "/account/identities", "identity-gone", name)
	return nil
}
