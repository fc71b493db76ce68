package pages

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
)

// consentRequest is what a consent page asks the user to grant.
type consentRequest struct {
	title    string
	client   *oauth.Client
	action   string     // where the decision posts
	params   url.Values // the request, carried by the form
	target   string     // the client's redirect origin (form-action)
	userCode string     // a device's code, to compare (RFC 8628 §3.3.1)
	scope    string
	resource string
}

// authorizeConsent is the consent request of an authorization request.
func authorizeConsent(a *oauth.AuthRequest) consentRequest {
	return consentRequest{title: "Connect " + a.Client.DisplayName(), client: a.Client, action: "/oauth/authorize",
		params: a.Params(), target: formTarget(a.RedirectURI), scope: a.Scope, resource: a.Resource}
}

// grantView is what the consent page says is granted, and about whom.
type grantView struct {
	UserCode   string      // the device's code
	Unverified string      // why the application is not verified ("" when it is)
	Scopes     []scopeView // as requested
	// ToolScoped is true when the scopes name tools: the grant reaches
	// only what they allow; otherwise everything in the workspace's tools.
	ToolScoped bool
	Resource   string
	Lifetime   string
}

// scopeView is a requested scope with what it allows in plain words.
type scopeView struct{ Name, Says string }

// scopeViews are the words of scope (validated by the authorization
// server) with what each allows.
func scopeViews(scope string) []scopeView {
	var out []scopeView
	for _, w := range gatehouse.Scopes(scope) {
		out = append(out, scopeView{Name: w, Says: gatehouse.ScopeSays(w)})
	}
	return out
}

// consent renders the consent page: the client (marked not verified when
// it registered itself), what is granted and for how long, and the user's
// workspaces to pick one from (the default one preselected) with the tools
// each would grant; a read that fails is the adapter's to answer.
func (h *handlers) consent(w http.ResponseWriter, r *http.Request, b *identity.BrowserSession, cr consentRequest, problem string) error {
	orgs, def, err := h.svc.OrgsOf(r.Context(), b.User)
	if err != nil {
		return err
	}
	c := cr.client
	p := &page{Title: cr.title, User: b.User, ClientName: c.DisplayName(), Action: cr.action, formTarget: cr.target, Error: problem,
		Next: cr.action + "?" + cr.params.Encode()} // "Not you?" signs out and comes back here
	g := &grantView{UserCode: cr.userCode, Scopes: scopeViews(cr.scope), ToolScoped: gatehouse.ToolScoped(cr.scope), Resource: cr.resource, Unverified: unverified(c),
		Lifetime: "until you disconnect it; it ends by itself after " + days(identity.RefreshTTL) + " days without use"}
	if strings.Contains(c.ID, "://") {
		if u, err := url.Parse(c.ID); err == nil {
			p.ClientName += " from " + u.Host
		}
	}
	if u, err := url.Parse(cr.params.Get("redirect_uri")); err == nil && u.Host != "" {
		p.ClientHost = u.Host
	}
	for k, v := range cr.params {
		p.Hidden = append(p.Hidden, hidden{k, v[0]})
	}
	sortHidden(p.Hidden)
	me := browserPrincipal(b)
	for _, o := range orgs {
		if c.OrgID != "" && o.ID != c.OrgID {
			continue // a workspace application acts in its own workspace only
		}
		choice := orgChoice{ID: o.ID, Name: o.Name, Kind: o.Kind, Role: o.Role, Checked: o.ID == def || o.ID == c.OrgID}
		rows, err := h.ws.ToolMatrix(r.Context(), me, o.ID)
		var e *gatehouse.Error
		if errors.As(err, &e) && e.Kind == gatehouse.KindForbidden {
			// A workspace this session may not use (require_mfa): its
			// refusal is the grant's to give; the page lists no tools.
			choice.Refused, err = true, nil
		}
		if err != nil {
			return err
		}
		for _, t := range rows {
			if t.Enabled {
				choice.Tools = append(choice.Tools, t.Tool)
			}
		}
		p.Orgs = append(p.Orgs, choice)
	}
	p.Data = g
	status := http.StatusOK
	if problem != "" {
		status = http.StatusBadRequest
	}
	h.render(w, r, status, "consent", p)
	return nil
}

// unverified says why client is not verified: every client today
// registered itself, by dynamic registration (RFC 7591) or as the URL of
// its metadata document, and no administrator vouched for it
// (RedirectsErrors is what vouching grants).
func unverified(c *oauth.Client) string {
	switch {
	case c.RedirectsErrors:
		return ""
	case strings.Contains(c.ID, "://"):
		return "It describes itself in a document it publishes; nobody checked who runs it."
	}
	return "It registered itself; nobody checked who runs it."
}

// sortHidden orders the hidden fields by name, so a page is the same
// for the same request.
func sortHidden(hs []hidden) {
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && hs[j].Name < hs[j-1].Name; j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}

// days is d in whole days.
func days(d time.Duration) string { return strconv.Itoa(int(d / (24 * time.Hour))) }
