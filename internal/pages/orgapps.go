package pages

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "app-created", Text: "Application registered."},
	{Key: "app-saved", Text: "Application saved."},
	{Key: "app-rotated", Text: "New secret made."},
	{Key: "app-deleted", Text: "Application deleted: its sign-ins and tokens were ended."},
}.add()

// The workspace's applications (issue 25 item 3): list and register at
// /workspaces/{id}/applications, edit, rotate the secret and delete at
// …/applications/{app}. The service decides who may (owners and admins of
// a team org) and what is valid.

// orgAppsData is the applications pages' data.
type orgAppsData struct {
	Org     workspace.OrgListing
	Links   []orgLink
	Here    string
	Apps    []workspace.Application
	App     *workspace.Application // the edit page's
	Methods []string
	Algs    []string
	Graces  []graceChoice
	Issuer  string
	// Secret is a secret just made, shown once, and the name of its
	// application (secretcard).
	Secret, SecretName string
	// PrevUntil is when the secret before the last rotation stops
	// working, while it still works ("" otherwise).
	PrevUntil string
}

// graceChoice is one choice of how long a rotated secret keeps working.
type graceChoice struct {
	Seconds int
	Label   string
}

var graceChoices = []graceChoice{{0, "Stop it now"}, {3600, "1 hour"}, {86400, "1 day"}, {604800, "7 days"}}

var appMethods = []string{workspace.AuthClientSecretBasic, workspace.AuthClientSecretPost, workspace.AuthPrivateKeyJWT, workspace.AuthNone}

// appFields are the form fields a refusal may be placed next to.
var appFields = []string{"client_name", "redirect_uris", "post_logout_redirect_uris", "scope", "token_endpoint_auth_method",
	"jwks_uri", "jwks", "id_token_signed_response_alg", "backchannel_logout_uri", "grace_seconds"}

func orgAppsPath(id string) string { return "/workspaces/" + id + "/applications" }

func orgAppPath(id, app string) string { return orgAppsPath(id) + "/" + app }

// orgAppsPage is the list page of workspace o.
func (h *handlers) orgAppsPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	apps, err := h.ws.Applications(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	p := c.page(r, tr(r, "%s: applications", o.Name), "workspaces")
	p.Data = &orgAppsData{Org: *o, Links: orgLinks(o), Here: "applications", Apps: apps, Methods: appMethods,
		Algs: []string{"RS256", "ES256"}, Graces: graceChoices}
	if h.oauth != nil {
		p.Data.(*orgAppsData).Issuer = h.oauth.Issuer()
	}
	p.Values = map[string]string{"token_endpoint_auth_method": workspace.AuthClientSecretBasic, "scope": "openid profile email offline_access",
		"id_token_signed_response_alg": "RS256"}
	return p, nil
}

// orgAppPage is the edit page of the application in the path, in
// workspace o.
func (h *handlers) orgAppPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	p, err := h.orgAppsPage(r, c, o)
	if err != nil {
		return nil, err
	}
	d := p.Data.(*orgAppsData)
	a, err := h.ws.Application(r.Context(), c.p, d.Org.ID, r.PathValue("app"))
	if err != nil {
		return nil, err
	}
	d.App = a
	if now := h.ws.Now(); a.PrevSecretHash != "" && now.Before(a.PrevSecretUntil) {
		d.PrevUntil = a.PrevSecretUntil.Format("2 Jan 2006 15:04 MST")
	}
	p.Title = d.Org.Name + ": " + a.ClientName
	p.Values = appValues(a)
	return p, nil
}

// appValues are an application's fields as the form shows them.
func appValues(a *workspace.Application) map[string]string {
	v := map[string]string{"client_name": a.ClientName, "redirect_uris": strings.Join(a.RedirectURIs, "\n"),
		"post_logout_redirect_uris": strings.Join(a.PostLogoutRedirectURIs, "\n"), "scope": a.Scope,
		"token_endpoint_auth_method": a.AuthMethod, "jwks_uri": a.JWKSURI, "jwks": a.JWKS, "id_token_signed_response_alg": a.IDTokenAlg,
		"backchannel_logout_uri": a.BackchannelLogoutURI}
	if a.FirstParty {
		v["first_party"] = "on"
	}
	return v
}

// appForm reads the application form: every field, as a full update.
func appForm(r *http.Request) (workspace.ApplicationInput, map[string]string) {
	lines := func(name string) *[]string {
		out := []string{}
		for _, l := range strings.Split(r.PostFormValue(name), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		return &out
	}
	str := func(name string) *string { v := strings.TrimSpace(r.PostFormValue(name)); return &v }
	first := r.PostFormValue("first_party") == "on"
	in := workspace.ApplicationInput{ClientName: str("client_name"), RedirectURIs: lines("redirect_uris"),
		PostLogoutRedirectURIs: lines("post_logout_redirect_uris"), Scope: str("scope"), AuthMethod: str("token_endpoint_auth_method"),
		JWKSURI: str("jwks_uri"), IDTokenAlg: str("id_token_signed_response_alg"), BackchannelLogoutURI: str("backchannel_logout_uri"),
		FirstParty: &first, JWKS: json.RawMessage("null")}
	if j := strings.TrimSpace(r.PostFormValue("jwks")); j != "" {
		in.JWKS = json.RawMessage(j)
		if !json.Valid(in.JWKS) {
			in.JWKS = json.RawMessage(strconv.Quote(j)) // refused as not a key set, next to its field
		}
	}
	values := map[string]string{}
	for _, f := range appFields {
		values[f] = r.PostFormValue(f)
	}
	values["first_party"] = r.PostFormValue("first_party")
	return in, values
}

// handleOrgAppsPage handles "GET /workspaces/{id}/applications": the
// applications, the register form, and once, right after registering one,
// its secret (only when it is that application's secret).
func (h *handlers) handleOrgAppsPage(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	p, err := h.orgAppsPage(r, c, o)
	if err != nil {
		return err
	}
	d := p.Data.(*orgAppsData)
	if id, secret := h.takeShown(w, r, orgAppsPath(d.Org.ID)); secret != "" {
		for i := range d.Apps {
			if a := &d.Apps[i]; a.ID == id && token.Hash(secret) == a.SecretHash {
				d.Secret, d.SecretName, p.Script = secret, a.ClientName, copyScriptPath
			}
		}
	}
	h.render(w, r, http.StatusOK, "orgapps", p)
	return nil
}

// handleCreateOrgApp handles "POST /workspaces/{id}/applications".
func (h *handlers) handleCreateOrgApp(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	in, values := appForm(r)
	in.JWKSURI = nilIfEmpty(in.JWKSURI)
	if string(in.JWKS) == "null" {
		in.JWKS = nil
	}
	na, err := h.ws.CreateApplication(r.Context(), c.p, id, in)
	if err != nil {
		return h.refusedIn(r, c, "orgapps", h.orgAppsPage, err, values, appFields...)
	}
	if na.Secret != "" {
		h.showOnce(w, orgAppsPath(id), na.App.ID, na.Secret)
	}
	done(w, r, orgAppsPath(id), "app-created")
	return nil
}

func nilIfEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// handleOrgAppPage handles "GET /workspaces/{id}/applications/{app}": the
// edit form, the rotate and delete forms, and once, right after a
// rotation, the new secret.
func (h *handlers) handleOrgAppPage(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	p, err := h.orgAppPage(r, c, o)
	if err != nil {
		return err
	}
	d := p.Data.(*orgAppsData)
	if id, secret := h.takeShown(w, r, orgAppPath(d.Org.ID, d.App.ID)); secret != "" && id == d.App.ID && token.Hash(secret) == d.App.SecretHash {
		d.Secret, d.SecretName, p.Script = secret, d.App.ClientName, copyScriptPath
	}
	h.render(w, r, http.StatusOK, "orgapp", p)
	return nil
}

// handleOrgAppAction handles "POST /workspaces/{id}/applications/{app}/{action}":
// save (the edit form), secret (rotate with the grace chosen) and delete.
func (h *handlers) handleOrgAppAction(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, app := r.PathValue("id"), r.PathValue("app")
	var values map[string]string
	var err error
	switch r.PathValue("action") {
	case "save":
		var in workspace.ApplicationInput
		in, values = appForm(r)
		if _, err = h.ws.UpdateApplication(r.Context(), c.p, id, app, in); err == nil {
			done(w, r, orgAppPath(id, app), "app-saved")
			return nil
		}
	case "secret":
		grace, convErr := strconv.Atoi(r.PostFormValue("grace_seconds"))
		if convErr != nil {
			grace = -1
		}
		var na *workspace.NewApplication
		if na, err = h.ws.RotateApplicationSecret(r.Context(), c.p, id, app, time.Duration(grace)*time.Second); err == nil {
			h.showOnce(w, orgAppPath(id, app), na.App.ID, na.Secret)
			done(w, r, orgAppPath(id, app), "app-rotated")
			return nil
		}
	case "delete":
		if err = h.ws.DeleteApplication(r.Context(), c.p, id, app); err == nil {
			done(w, r, orgAppsPath(id), "app-deleted")
			return nil
		}
	default:
		http.NotFound(w, r)
		return nil
	}
	p, perr := h.pageIn(asGet(r), c, h.orgAppPage)
	if perr != nil {
		return perr
	}
	if values == nil {
		values = p.Values
	}
	return refused("orgapp", p, err, values, appFields...)
}
