package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "domain-claimed", Text: "Domain claimed: publish its TXT record, then verify."},
	{Key: "domain-verify", Text: "Domain verified."},
	{Key: "domain-mode", Text: "Domain mode changed."},
	{Key: "domain-delete", Text: "Domain claim deleted.", Named: "The claim of %s was deleted."},
}.add()

// domainRow is one claim as the domains page lists it, with the TXT record
// to publish while it is not verified.
type domainRow struct {
	workspace.DomainClaim
	TXTName, TXTValue string
}

// domainsData is the domains page's data.
type domainsData struct {
	Org     workspace.OrgListing
	Links   []orgLink
	Here    string
	Domains []domainRow
	Modes   []string
}

// domainsPath is the domains page of workspace id.
func domainsPath(id string) string { return "/workspaces/" + id + "/domains" }

// domainsPage is "GET /workspaces/{id}/domains"; Domains answers 403 to
// the roles without org.domains.manage.
func (h *handlers) domainsPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	ds, err := h.ws.Domains(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	d := domainsData{Org: *o, Links: orgLinks(o), Here: "domains", Modes: []string{workspace.ModeSuggest, workspace.ModeAutoJoin}}
	for _, dc := range ds {
		row := domainRow{DomainClaim: dc}
		if dc.VerifiedAt == nil {
			row.TXTName, row.TXTValue = workspace.TXTName(dc.Domain), workspace.TXTPrefix+dc.Token
		}
		d.Domains = append(d.Domains, row)
	}
	p := c.page(r, tr(r, "%s: domains", o.Name), "workspaces")
	p.Data, p.Script = d, copyScriptPath // copy buttons for the TXT records
	p.Values = map[string]string{"mode": workspace.ModeSuggest}
	return p, nil
}

// handleClaimDomain handles "POST /workspaces/{id}/domains": domain and
// mode; ClaimDomain decides who may (403) and what is valid (400, 409).
func (h *handlers) handleClaimDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, domain, mode := r.PathValue("id"), strings.TrimSpace(r.PostFormValue("domain")), r.PostFormValue("mode")
	if _, err := h.ws.ClaimDomain(r.Context(), c.p, id, domain, mode); err != nil {
		return h.refusedIn(r, c, "domains", h.domainsPage, err, map[string]string{"domain": domain, "mode": mode}, "domain", "mode")
	}
	done(w, r, domainsPath(id), "domain-claimed")
	return nil
}

// handleDomainAction handles "POST /workspaces/{id}/domains/{action}"
// (verify, mode, delete) of the claim domain_id.
func (h *handlers) handleDomainAction(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, claim := r.PathValue("id"), r.PostFormValue("domain_id")
	var err error
	key := "domain-" + r.PathValue("action")
	switch r.PathValue("action") {
	case "verify":
		_, _, err = h.ws.VerifyDomain(r.Context(), c.p, id, claim)
	case "mode":
		_, err = h.ws.SetDomainMode(r.Context(), c.p, id, claim, r.PostFormValue("mode"))
	case "delete":
		var name string
		name, err = h.domainName(r, c, id, claim)
		if err == nil && !h.confirmed(w, r, c, "", confirmStep{Title: tr(r, "Delete the claim of %s?", name),
			Message: tr(r, "People with an address at %s are no longer offered this workspace or joined to it. Claiming it again needs a new TXT record.", name),
			Button:  "Delete the claim", Back: domainsPath(id)}) {
			return nil
		}
		if err == nil {
			err = h.ws.DeleteDomain(r.Context(), c.p, id, claim)
		}
		if err == nil {
			h.doneNamed(w, r, domainsPath(id), key, name)
			return nil
		}
	default:
		http.NotFound(w, r)
		return nil
	}
	if err != nil {
		// Next to its field, or above the list: the verification's
		// propagation hint.
		return h.refusedIn(r, c, "domains", h.domainsPage, err, nil)
	}
	done(w, r, domainsPath(id), key)
	return nil
}

// domainName is how the deletion's confirmation names the claim.
func (h *handlers) domainName(r *http.Request, c *caller, id, claim string) (string, error) {
	ds, err := h.ws.Domains(r.Context(), c.p, id)
	if err != nil {
		return "", err
	}
	name := "this domain"
	for _, d := range ds {
		if d.ID == claim {
			name = d.Domain
		}
	}
	return name, nil
}
