package pages

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// activityPath is the account's security activity page.
const activityPath = identity.ActivityPath

// activityRow is one entry of the security activity page.
type activityRow struct {
	At          time.Time
	What        string // the action's label
	Detail      string // how: a sign-in's method, a key's or passkey's name, codes left
	Device, IP  string // a sign-in's client, "" for the rest
	SignIn, Bad bool   // a sign-in; a refused one
}

// signInMethods name the ways of signing in a sign-in entry records.
var signInMethods = map[string]string{identity.MethodPassword: "with password", identity.MethodMagicLink: "with an email link",
	identity.MethodPasskey: "with a passkey", identity.MethodSSO: "with single sign-on", identity.MethodSocial: "with another provider",
	identity.FactorTOTP: "with an authenticator code", identity.FactorRecoveryCode: "with a recovery code"}

// handleActivityPage handles "GET /account/activity": the account's
// sign-ins and security changes, newest first, a page at a time (before:
// the cursor of the page's last entry).
func (h *handlers) handleActivityPage(w http.ResponseWriter, r *http.Request, c *caller) error {
	es, next, err := h.svc.SecurityActivity(r.Context(), c.p, r.URL.Query().Get("before"))
	if err != nil {
		return err
	}
	rows := make([]activityRow, 0, len(es))
	for _, e := range es {
		meta := entryMeta(e.Meta)
		row := activityRow{At: e.At, What: auditLabel(e.Tool, e.Action)}
		switch e.Action {
		case "identity.user.signed_in", "identity.user.signin_failed", "identity.user.second_factor_failed", "identity.user.locked_out":
			row.SignIn, row.Bad = true, e.Action != "identity.user.signed_in"
			if m, ok := signInMethods[meta["method"]]; ok {
				row.Detail = i18n.T(langOf(r), m)
			}
			row.IP = meta["ip"]
			if ua, ok := meta["user_agent"]; ok {
				row.Device = device(langOf(r), ua)
			}
		case "identity.user.second_factor_verified":
			row.What = "Recovery code used to sign in"
		case "identity.api_key.created", "identity.api_key.revoked", "identity.user.passkey_added", "identity.user.passkey_removed":
			if n := meta["name"]; n != "" {
				row.Detail = tr(r, "“%s”", n)
			}
		case "identity.user.email_changed", "identity.user.email_change_requested":
			if to := meta["to"]; to != "" {
				row.Detail = tr(r, "to %s", to)
			}
		}
		rows = append(rows, row)
	}
	p := c.page(r, "Security activity", "profile")
	p.Data = map[string]any{"Rows": rows, "Next": next, "First": r.URL.Query().Get("before") == ""}
	h.render(w, r, http.StatusOK, "activity", p)
	return nil
}
