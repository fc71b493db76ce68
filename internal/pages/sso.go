package pages

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// A workspace's SSO connections (issue 27 item 2): the list at
// /workspaces/{id}/sso, a step-by-step set-up per protocol at
// …/sso/new/oidc and …/sso/new/saml, and each connection's page at
// …/sso/{conn} with the values to paste into the identity provider, the
// edit form and the delete button. The sso service decides who may
// (owners and admins of a team org), what is valid and when a recent
// sign-in is owed, as for the API.

// ssoData is the SSO pages' data.
type ssoData struct {
	Org         workspace.OrgListing
	Links       []orgLink
	Here        string
	Connections []sso.Connection
	// Protocol is the form's ("oidc" or "saml"); Conn the edited
	// connection (nil on a set-up page).
	Protocol string
	Conn     *sso.Connection
	// Domains are the workspace's verified domains a connection may
	// serve; Roles the default roles it may give.
	Domains []string
	Roles   []string
	// Teams are the workspace's teams, which groups may map to.
	Teams []workspace.Team
	// Setup are the values to paste into the identity provider.
	Setup []setupValue
	// Certs are a SAML connection's own certificates, the signing one
	// first; MetadataURL serves our metadata, which publishes them.
	Certs       []sso.SPCertificate
	MetadataURL string
}

// setupValue is one value to paste, with its copy button.
type setupValue struct{ ID, Label, Value, Hint string }

// ssoFields are the form fields a refusal may be placed next to.
var ssoFields = []string{"name", "issuer", "client_id", "client_secret", "scopes", "default_role", "domains", "metadata_url", "metadata_xml",
	"name_attribute", "groups_attribute", "group_teams"}

// ssoFieldNames are the API's fields of a refusal by the form's names.
var ssoFieldNames = map[string]string{"saml.metadata_url": "metadata_url", "saml.metadata_xml": "metadata_xml",
	"attribute_mapping.name": "name_attribute", "attribute_mapping.groups": "groups_attribute", "attribute_mapping.group_teams": "group_teams"}

// ssoRoles are the default roles a connection may give (never owner).
var ssoRoles = []string{workspace.RoleMember, workspace.RoleAdmin, workspace.RoleBilling}

func ssoPath(id string) string { return "/workspaces/" + id + "/sso" }

func ssoConnPath(id, conn string) string { return ssoPath(id) + "/" + conn }

// The notices of the SSO pages (?done=key).
var _ = pageNotices{
	{Key: "sso-created", Named: "The connection %s was added. Paste the values below into your identity provider, then sign in with an address of its domains to try it."},
	{Key: "sso-updated", Named: "The connection %s was saved."},
	{Key: "sso-deleted", Named: "The connection %s was deleted."},
}.add()

// ssoPage is a page of workspace o: its connections (403 to
// the roles that may not manage them) and its verified domains.
func (h *handlers) ssoPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, *ssoData, error) {
	if h.sso == nil {
		return nil, nil, errPageNotFound
	}
	cs, err := h.sso.Connections(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, nil, err
	}
	d := &ssoData{Org: *o, Links: orgLinks(o), Here: "sso", Connections: cs, Roles: ssoRoles}
	if ds, err := h.ws.Domains(r.Context(), c.p, o.ID); err == nil {
		for _, dc := range ds {
			if dc.VerifiedAt != nil {
				d.Domains = append(d.Domains, dc.Domain)
			}
		}
	}
	if ts, err := h.ws.Teams(r.Context(), c.p, o.ID); err == nil {
		d.Teams = ts
	}
	p := c.page(r, tr(r, "%s: single sign-on", o.Name), "workspaces")
	p.Data, p.Script = d, copyScriptPath
	return p, d, nil
}

// ssoListPage is "GET /workspaces/{id}/sso": the connections and the two
// ways to add one.
func (h *handlers) ssoListPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	p, _, err := h.ssoPage(r, c, o)
	return p, err
}

// ssoNewPage is "GET /workspaces/{id}/sso/new/{protocol}", the set-up page
// of the protocol in the path: the values the identity provider needs
// first (OpenID Connect's redirect URI; a SAML connection's own URLs exist
// once it does, on its page), then the form.
func (h *handlers) ssoNewPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	proto := ssoProtocol(r)
	if proto != sso.ProtocolOIDC && proto != sso.ProtocolSAML {
		return nil, errPageNotFound
	}
	p, d, err := h.ssoPage(r, c, o)
	if err != nil {
		return nil, err
	}
	d.Protocol = proto
	if proto == sso.ProtocolOIDC {
		p.Title = tr(r, "%s: add an OpenID Connect connection", d.Org.Name)
		d.Setup = []setupValue{{ID: "redirect-uri", Label: "Redirect URI (sign-in redirect URI, reply URL)", Value: h.sso.CallbackURL(),
			Hint: "A web application; the authorization code flow."}}
	} else {
		p.Title = tr(r, "%s: add a SAML connection", d.Org.Name)
	}
	p.Values = map[string]string{"name": "Single sign-on", "scopes": strings.Join(sso.DefaultScopes, " "), "default_role": workspace.RoleMember,
		"domains": strings.Join(d.Domains, " ")}
	return p, nil
}

// ssoProtocol is the protocol a set-up page's path ends with.
func ssoProtocol(r *http.Request) string {
	return r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
}

// handleSSOCreate handles "POST /workspaces/{id}/sso/new/{protocol}";
// CreateConnection decides who may (403, or a sign-in again), and what is
// valid (400 by field, 409).
func (h *handlers) handleSSOCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, saml := r.PathValue("id"), ssoProtocol(r) == sso.ProtocolSAML
	in := ssoInput(r, nil, saml)
	if saml {
		in.SAML = samlInput(r, nil)
	}
	conn, err := h.sso.CreateConnection(r.Context(), c.p, id, in)
	if err != nil {
		return h.refusedIn(r, c, "ssoform", h.ssoNewPage, ssoRefusal(err), ssoValues(r), ssoFields...)
	}
	h.doneNamed(w, r, ssoConnPath(id, conn.ID), "sso-created", conn.Name)
	return nil
}

// ssoConnPage is the page of the connection in the path: the values to
// paste into its identity provider and the edit form, filled.
func (h *handlers) ssoConnPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	p, d, err := h.ssoPage(r, c, o)
	if err != nil {
		return nil, err
	}
	conn, err := h.sso.Connection(r.Context(), c.p, d.Org.ID, r.PathValue("conn"))
	if err != nil {
		return nil, err
	}
	d.Conn, d.Protocol, p.Title = conn, conn.Protocol, d.Org.Name+": "+conn.Name
	if conn.SAML != nil {
		if d.Certs, err = h.sso.SAMLCertificates(r.Context(), conn); err != nil {
			return nil, err
		}
		d.Protocol, d.MetadataURL = sso.ProtocolSAML, h.sso.SAMLEntityID(conn.ID)
		d.Setup = []setupValue{
			{ID: "sp-entity-id", Label: "Entity ID (audience URI, identifier)", Value: h.sso.SAMLEntityID(conn.ID)},
			{ID: "sp-acs-url", Label: "ACS URL (single sign-on URL, reply URL)", Value: h.sso.SAMLACSURL(conn.ID), Hint: "HTTP-POST binding."},
			{ID: "sp-metadata-url", Label: "Service provider metadata URL", Value: h.sso.SAMLEntityID(conn.ID),
				Hint: "For identity providers that read our metadata instead of the two values above."},
		}
	} else {
		d.Protocol = sso.ProtocolOIDC
		d.Setup = []setupValue{{ID: "redirect-uri", Label: "Redirect URI (sign-in redirect URI, reply URL)", Value: h.sso.CallbackURL()}}
	}
	enforce := ""
	if conn.Enforce {
		enforce = "on"
	}
	p.Values = map[string]string{"name": conn.Name, "issuer": conn.Issuer, "client_id": conn.ClientID, "scopes": strings.Join(conn.Scopes, " "),
		"default_role": conn.DefaultRole, "domains": strings.Join(conn.Domains, " "), "enforce": enforce}
	p.Values["name_attribute"], p.Values["groups_attribute"] = conn.Mapping.Name, conn.Mapping.Groups
	for _, gt := range conn.Mapping.GroupTeams {
		if v := p.Values["group_"+gt.TeamID]; v != "" {
			p.Values["group_"+gt.TeamID] = v + ", " + gt.Group
		} else {
			p.Values["group_"+gt.TeamID] = gt.Group
		}
	}
	if conn.SAML != nil {
		p.Values["metadata_url"] = conn.SAML.MetadataURL
		if conn.SAML.AllowIdPInitiated {
			p.Values["allow_idp_initiated"] = "on"
		}
	}
	return p, nil
}

// handleSSOConnPage handles "GET /workspaces/{id}/sso/{conn}": the
// connection's page, or with ?certificate= one of a SAML connection's
// certificates to download.
func (h *handlers) handleSSOConnPage(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	p, err := h.ssoConnPage(r, c, o)
	if err != nil {
		return err
	}
	d := p.Data.(*ssoData)
	if which := r.URL.Query().Get("certificate"); which != "" && d.Conn.SAML != nil {
		return ssoCertDownload(w, d.Conn, d.Certs, which)
	}
	h.render(w, r, http.StatusOK, "ssoform", p)
	return nil
}

// handleSSOUpdate handles "POST /workspaces/{id}/sso/{conn}": the edit
// form; an unchanged issuer, client id or metadata URL is not sent (no
// new discovery or fetch), nor an empty client secret (kept).
func (h *handlers) handleSSOUpdate(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, connID := r.PathValue("id"), r.PathValue("conn")
	old, err := h.sso.Connection(r.Context(), c.p, id, connID)
	if err != nil {
		return err
	}
	if step := r.PostFormValue("key"); step != "" {
		return h.ssoKeyStep(w, r, c, old, step)
	}
	in := ssoInput(r, old, old.SAML != nil)
	if old.SAML != nil {
		in.SAML = samlInput(r, old)
	}
	conn, err := h.sso.UpdateConnection(r.Context(), c.p, id, connID, in)
	if err != nil {
		return h.refusedIn(r, c, "ssoform", h.ssoConnPage, ssoRefusal(err), ssoValues(r), ssoFields...)
	}
	h.doneNamed(w, r, ssoConnPath(id, conn.ID), "sso-updated", conn.Name)
	return nil
}

// handleSSODelete handles "POST /workspaces/{id}/sso/{conn}/delete",
// after a confirmation step.
func (h *handlers) handleSSODelete(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, connID := r.PathValue("id"), r.PathValue("conn")
	conn, err := h.sso.Connection(r.Context(), c.p, id, connID)
	if err != nil {
		return err
	}
	if !h.confirmed(w, r, c, "workspaces", confirmStep{Title: tr(r, "Delete the connection %s?", conn.Name),
		Message: tr(r, "People at %s can no longer sign in through it, and the accounts linked to it are unlinked. Their sessions stay open. This cannot be undone: a new connection needs new values in the identity provider.", strings.Join(conn.Domains, ", ")),
		Button:  tr(r, "Delete %s", conn.Name), Back: ssoConnPath(id, connID)}) {
		return nil
	}
	if err := h.sso.DeleteConnection(r.Context(), c.p, id, connID); err != nil {
		return err
	}
	h.doneNamed(w, r, ssoPath(id), "sso-deleted", conn.Name)
	return nil
}

// ssoInput is the common fields of the form (and OpenID Connect's unless
// saml); on an edit (old set) the fields equal to old's are left out, so
// an unchanged issuer is not discovered again.
func ssoInput(r *http.Request, old *sso.Connection, saml bool) sso.Input {
	str := func(name string) *string { v := strings.TrimSpace(r.PostFormValue(name)); return &v }
	domains, scopes := strings.Fields(strings.ReplaceAll(strings.Join(r.PostForm["domains"], " "), ",", " ")), strings.Fields(r.PostFormValue("scopes"))
	enforce := r.PostFormValue("enforce") == "on"
	in := sso.Input{Name: str("name"), DefaultRole: str("default_role"), Enforce: &enforce, Domains: &domains}
	if _, ok := r.PostForm["groups_attribute"]; ok {
		in.Mapping = mappingInput(r)
	}
	if saml {
		return in
	}
	in.Issuer, in.ClientID, in.Scopes = str("issuer"), str("client_id"), &scopes
	if secret := r.PostFormValue("client_secret"); secret != "" || old == nil {
		in.ClientSecret = &secret
	}
	if old != nil {
		if *in.Issuer == old.Issuer {
			in.Issuer = nil
		}
		if *in.ClientID == old.ClientID {
			in.ClientID = nil
		}
	}
	return in
}

// samlInput is the SAML fields of the form: the metadata by URL or as
// XML (an edit sends the URL only when it changed, or to read it again),
// and the IdP-initiated switch.
func samlInput(r *http.Request, old *sso.Connection) *sso.SAMLInput {
	allow := r.PostFormValue("allow_idp_initiated") == "on"
	in := &sso.SAMLInput{AllowIdPInitiated: &allow}
	u, x := strings.TrimSpace(r.PostFormValue("metadata_url")), strings.TrimSpace(r.PostFormValue("metadata_xml"))
	if x != "" {
		in.MetadataXML = &x
	}
	if u != "" && (old == nil || u != old.SAML.MetadataURL || r.PostFormValue("refetch") == "on") && (x == "" || old == nil) {
		in.MetadataURL = &u
	}
	return in
}

// mappingInput is the attribute mapping of the edit form: the two
// attribute names and, per team, the groups (separated by commas) that
// put a person on it.
func mappingInput(r *http.Request) *sso.AttributeMapping {
	m := &sso.AttributeMapping{Name: r.PostFormValue("name_attribute"), Groups: r.PostFormValue("groups_attribute")}
	for name := range r.PostForm {
		team, ok := strings.CutPrefix(name, "group_")
		if !ok || name == "group_teams" {
			continue
		}
		for g := range strings.SplitSeq(r.PostFormValue(name), ",") {
			if g = strings.TrimSpace(g); g != "" {
				m.GroupTeams = append(m.GroupTeams, sso.GroupTeam{Group: g, TeamID: team})
			}
		}
	}
	slices.SortFunc(m.GroupTeams, func(a, b sso.GroupTeam) int { return strings.Compare(a.TeamID+"\x00"+a.Group, b.TeamID+"\x00"+b.Group) })
	return m
}

// ssoValues are the typed values shown again with a refusal (never the
// client secret).
func ssoValues(r *http.Request) map[string]string {
	v := map[string]string{}
	for name := range r.PostForm {
		if strings.HasPrefix(name, "group_") {
			v[name] = r.PostFormValue(name)
		}
	}
	for _, name := range []string{"name", "issuer", "client_id", "scopes", "default_role", "enforce", "metadata_url", "metadata_xml", "allow_idp_initiated",
		"name_attribute", "groups_attribute"} {
		v[name] = r.PostFormValue(name)
	}
	v["domains"] = strings.Join(r.PostForm["domains"], " ")
	return v
}

// ssoRefusal names a refusal of a nested API field by the form's field
// ("saml.metadata_url" is the form's metadata_url), its message too, so
// it reads with the form's label.
func ssoRefusal(err error) error {
	var e *gatehouse.Error
	if !errors.As(err, &e) || ssoFieldNames[e.Field] == "" {
		return err
	}
	out := *e
	out.Field = ssoFieldNames[e.Field]
	if rest, ok := strings.CutPrefix(e.Message, e.Field); ok {
		out.Message = out.Field + rest
	} else if rest, ok := strings.CutPrefix(e.Message, strings.TrimPrefix(e.Field, "saml.")); ok {
		out.Message = out.Field + rest
	}
	return &out
}

// A SAML connection's own keys (issue 27): its page lists our
// certificates (the current one that signs, and during a rotation the
// next one, published but not signing yet) with their fingerprints and a
// download each, and offers the rotation's two steps as the API does
// (POST …/saml/keys and …/saml/keys/promote): add a next key, then, once
// the identity provider has its certificate, make it current after a
// confirmation step. The steps post to the connection's page with a key
// field (stage or promote) beside the edit form's fields.

// The notices of the key steps on the connection's page.
var _ = pageNotices{
	{Key: "sso-key-stage", Text: "A next key was added. Give your identity provider its certificate (or let it read our metadata again), then make it current."},
	{Key: "sso-key-promote", Text: "The next key is current: it signs from now on, and the old one is no longer published."},
}.add()

// ssoKeyStep takes step (sso.KeyStage or sso.KeyPromote) of the rotation
// of conn's key; promoting asks for a confirmation first (the old key
// cannot come back). RotateSAMLKey decides who may (403, or a sign-in
// again) and audits; a step out of turn (409) is told on the page.
func (h *handlers) ssoKeyStep(w http.ResponseWriter, r *http.Request, c *caller, conn *sso.Connection, step string) error {
	id := r.PathValue("id")
	if step == sso.KeyPromote && !h.confirmed(w, r, c, "workspaces", confirmStep{Title: tr(r, "Make the next key of %s current?", conn.Name),
		Message: tr(r, "It signs our requests from now on, and the current key is no longer published nor accepted for encrypted assertions. This cannot be undone: check first that your identity provider has the next certificate."),
		Button:  tr(r, "Make the next key current"), Back: ssoConnPath(id, conn.ID)}) {
		return nil
	}
	if _, err := h.sso.RotateSAMLKey(r.Context(), c.p, id, conn.ID, step); err != nil {
		p, perr := h.pageIn(asGet(r), c, h.ssoConnPage)
		if perr != nil {
			return perr
		}
		return refused("ssoform", p, err, p.Values)
	}
	done(w, r, ssoConnPath(id, conn.ID), "sso-key-"+step)
	return nil
}

// ssoCertDownload answers the certificate which ("current" or "next") of
// certs, PEM, as a file named after conn.
func ssoCertDownload(w http.ResponseWriter, conn *sso.Connection, certs []sso.SPCertificate, which string) error {
	i := slices.Index([]string{"current", "next"}, which)
	if i < 0 || i >= len(certs) {
		return errPageNotFound
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Content-Disposition", `attachment; filename="gatehouse-saml-`+conn.ID+"-"+which+`.pem"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(certs[i].PEM))
	return nil
}
