package pages_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestConsoleDomains is the domains page's permission table and flow: an
// admin claims a domain and sees the TXT record to publish with copy
// buttons; verifying before it is published explains propagation (400)
// and changes nothing; published on the test DNS server, it verifies; the
// mode changes and the claim is deleted. Billing and member get the
// service's 403 for the page and for forged posts, and nothing changes.
func TestConsoleDomains(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, admin, billing, member := env.Register(t), env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Domainers", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"},
			[2]string{billing.UserID, "billing"}, [2]string{member.UserID, "member"})
		path := "/workspaces/" + org + "/domains"
		ab, bb, mb := signedIn(t, env, admin), signedIn(t, env, billing), signedIn(t, env, member)
		domain := "console-" + testenv.RandomHex(4) + ".test"

		wantPage(t, "empty", ab.Get(t, path), 200, "This workspace has claimed no domain.")
		wantPage(t, "public provider", ab.Post(t, path, url.Values{"domain": {"gmail.com"}, "mode": {"suggest"}}), 400,
			"public email provider", `value="gmail.com"`)
		wantPage(t, "no domain", ab.Post(t, path, url.Values{"domain": {" "}, "mode": {"suggest"}}), 400, `id="domain-error"`)
		wantPage(t, "bad mode", ab.Post(t, path, url.Values{"domain": {domain}, "mode": {"sometimes"}}), 400, `id="mode-error"`)
		wantRedirect(t, "claim", ab.Post(t, path, url.Values{"domain": {"HTTPS://" + strings.ToUpper(domain)}, "mode": {"suggest"}}), path+"?done=domain-claimed")
		res := ab.Get(t, path)
		value := regexp.MustCompile(`<code id="txt-value-0">(gatehouse-verification=[a-z0-9]+)</code>`).FindStringSubmatch(res.Body)
		if value == nil {
			t.Fatalf("no TXT value shown:\n%.3000s", res.Body)
		}
		wantPage(t, "claimed", res, 200, domain, "Not verified", `<code id="txt-name-0">_service.`+domain+`</code>`,
			`data-copy="txt-value-0"`, `src="/assets/copy.js"`)
		claim := regexp.MustCompile(`name="domain_id" value="([^"]+)"`).FindStringSubmatch(res.Body)[1]
		// Verifying before the record is published: the refusal over the
		// list, and the propagation hint by the record.
		wantPage(t, "too early", ab.Post(t, path+"/verify", url.Values{"domain_id": {claim}}), 400, `class="error" role="alert"`,
			"DNS changes can take minutes to hours")

		wantPage(t, "too early", ab.Post(t, path+"/verify", url.Values{"domain_id": {claim}}), 400, "propagate", "Not verified")
		for name, b := range map[string]*testenv.Browser{"billing": bb, "member": mb} {
			wantPage(t, name+" page", b.Get(t, path), 403)
			wantPage(t, name+" claims", b.Post(t, path, url.Values{"domain": {"x" + domain}}), 403)
			wantPage(t, name+" deletes", b.Post(t, path+"/delete", url.Values{"domain_id": {claim}}), 403)
			wantPage(t, name+" switches", b.Post(t, path+"/mode", url.Values{"domain_id": {claim}, "mode": {"auto_join"}}), 403)
		}
		env.DNS.SetTXT("_service."+domain, value[1])
		wantPage(t, "billing verifies", bb.Post(t, path+"/verify", url.Values{"domain_id": {claim}}), 403)
		res = ab.Get(t, path)
		if strings.Contains(res.Body, ">Verified<") || strings.Contains(res.Body, "mode auto_join") || strings.Count(res.Body, `name="domain_id" value="`+claim) != 3 {
			t.Fatalf("refused posts changed the claim:\n%.3000s", res.Body)
		}
		wantRedirect(t, "verify", ab.Post(t, path+"/verify", url.Values{"domain_id": {claim}}), path+"?done=domain-verify")
		res = ab.Get(t, path)
		wantPage(t, "verified", res, 200, `<span class="badge ok">Verified</span>`)
		if strings.Contains(res.Body, "txt-value-0") {
			t.Fatalf("a verified claim still shows its TXT record")
		}
		wantRedirect(t, "mode", ab.Post(t, path+"/mode", url.Values{"domain_id": {claim}, "mode": {"auto_join"}}), path+"?done=domain-mode")
		wantPage(t, "auto_join", ab.Get(t, path), 200, "mode auto_join")
		wantPage(t, "unknown action", ab.Post(t, path+"/explode", url.Values{"domain_id": {claim}}), 404)
		wantRedirect(t, "delete", ab.Post(t, path+"/delete", url.Values{"confirm": {"yes"}, "domain_id": {claim}}), path+"?done=domain-delete")
		wantPage(t, "deleted", ab.Get(t, path), 200, "This workspace has claimed no domain.")
	})
}
