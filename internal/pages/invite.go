package pages

import (
	"net/http"
	"net/url"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "joined", Text: "You joined the workspace."},
	{Key: "joined-confirmed", Text: "You joined the workspace. Your email address is confirmed: the invitation's link reached it."},
	{Key: "member", Text: "You were already a member of this workspace."},
}.add()

// handleInvitePage handles "GET /invite?token=…": a preview, and an accept
// button for a signed-in user (a sign-in link otherwise).
func (h *handlers) handleInvitePage(w http.ResponseWriter, r *http.Request) error {
	tok := r.URL.Query().Get("token")
	inv, err := h.ws.PreviewInvitation(r.Context(), tok)
	if err != nil {
		return err
	}
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	p := &page{Title: tr(r, "Join %s", inv.Org.Name), Invite: inv, Token: tok,
		SignIn: "/signin?" + url.Values{"next": {r.URL.RequestURI()}, "intro": {"invite"}}.Encode(),
		Next:   "/signup?" + url.Values{"next": {r.URL.RequestURI()}}.Encode()}
	if b != nil {
		p.User = b.User
	}
	h.render(w, r, http.StatusOK, "invite", p)
	return nil
}

// handleInviteAccept handles "POST /invite" and lands on the workspaces
// page, the joined one listed, saying so when the mailed link confirmed
// the person's address too.
func (h *handlers) handleInviteAccept(w http.ResponseWriter, r *http.Request) error {
	tok := r.PostFormValue("token")
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	if b == nil {
		http.Redirect(w, r, "/signin?"+url.Values{"next": {"/invite?token=" + url.QueryEscape(tok)}, "intro": {"invite"}}.Encode(), http.StatusSeeOther)
		return nil
	}
	p, err := h.svc.BrowserPrincipal(r.Context(), b)
	if err != nil {
		return err
	}
	out, err := h.ws.AcceptInvitation(r.Context(), p, tok)
	if err != nil {
		return err
	}
	key := "joined"
	switch {
	case out.AlreadyMember:
		key = "member"
	case out.EmailVerified:
		key = "joined-confirmed"
	}
	done(w, r, "/account/workspaces", key)
	return nil
}
