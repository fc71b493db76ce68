package pages_test

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// seedMembers adds n members to org in a few multi-row inserts: user i is
// "Member i" <member-i@….example>, joined at 1000+i µs (so listed in i's order),
// except that name gives some their own.
func seedMembers(t *testing.T, env *testenv.Env, org string, n int, name map[int]string) {
	t.Helper()
	const batch = 500
	tag := testenv.RandomHex(4) // ids and addresses unique across runs on one database
	for start := 0; start < n; start += batch {
		var users, members []string
		for i := start; i < min(start+batch, n); i++ {
			id := fmt.Sprintf("%s-0000-4000-8000-%012d", tag, i)
			nm := fmt.Sprintf("Member %05d", i)
			if s, ok := name[i]; ok {
				nm = s
			}
			email := fmt.Sprintf("member-%05d@%s.example", i, tag)
			users = append(users, fmt.Sprintf("('%s', '%s', '%s', '%s', 1, 1)", id, email, email, strings.ReplaceAll(nm, "'", "''")))
			members = append(members, fmt.Sprintf("('%s', '%s', 'member', %d)", org, id, 1000+i))
		}
		env.Exec(t, `INSERT INTO users (id, email, email_key, name, created_at, updated_at) VALUES `+strings.Join(users, ", "))
		env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES `+strings.Join(members, ", "))
	}
}

// TestMembersDirectory10000: a workspace of 10,000 members is paged and
// searched by the store: page 1, a later page, a search by name, one by
// address in another case, and a search whose % and _ are literal, not
// LIKE's wildcards.
func TestMembersDirectory10000(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.TeamOrg(t, "Stadium", [2]string{owner.UserID, "owner"})
		seedMembers(t, env, org, 10000, map[int]string{4242: "Growth 50% Club", 7777: "snake_case fan"})
		path := "/workspaces/" + org + "/members"
		b := signedIn(t, env, owner)
		rows := func(body string) int { return strings.Count(body, `<li class="row">`) }

		res := b.Get(t, path)
		wantPage(t, "page 1", res, 200, "10001 members", "page 1", "Next page", "Member 00000", "Member 00049")
		if n := rows(res.Body); n != 50 || strings.Contains(res.Body, "Member 00050") {
			t.Fatalf("page 1 lists %d rows (or goes past member 49)", n)
		}
		res = b.Get(t, path+"?page=150")
		wantPage(t, "page 150", res, 200, "page 150", "Previous page", "Member 07450", "Member 07499")
		if n := rows(res.Body); n != 50 || strings.Contains(res.Body, "Member 07449") || strings.Contains(res.Body, "Member 07500") {
			t.Fatalf("page 150 lists %d rows", n)
		}
		res = b.Get(t, path+"?page=201")
		wantPage(t, "last page", res, 200, "page 201", owner.Email) // the owner joined last
		if n := rows(res.Body); n != 1 || strings.Contains(res.Body, "Next page") {
			t.Fatalf("the last page lists %d rows", n)
		}
		wantPage(t, "past the end", b.Get(t, path+"?page=9999"), 200, "page 201", owner.Email)
		wantPage(t, "by name", b.Get(t, path+"?q=member+0123"), 200, "10 members matching", "Member 01230", "Member 01239")
		wantPage(t, "search past the end", b.Get(t, path+"?q=member+0123&page=7"), 200, "10 members matching", "Member 01230")
		wantPage(t, "by address", b.Get(t, path+"?q="+url.QueryEscape("MEMBER-05000@")), 200, "1 member matching", "member-05000@")
		wantPage(t, "literal %", b.Get(t, path+"?q="+url.QueryEscape("50%")), 200, "1 member matching", "Growth 50% Club")
		wantPage(t, "literal _", b.Get(t, path+"?q="+url.QueryEscape("e_c")), 200, "1 member matching", "snake_case fan")
		wantPage(t, "nothing", b.Get(t, path+"?q=zzz"), 200, "0 members matching", "No member matches.")
	})
}

// nextLink is the href of a page's "Next page" link, "" when there is none.
func nextLink(body string) string {
	m := regexp.MustCompile(`href="([^"]*)">Next page`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestMembersKeysetLinks follows the "Next page" links, which carry the
// last row shown (keyset paging): members of one name are all listed, once,
// the last page has no next link, and a search pages over its matches only,
// its total shown only when the matches fit on the first page.
func TestMembersKeysetLinks(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.TeamOrg(t, "Keyset", [2]string{owner.UserID, "owner"})
		same := map[int]string{}
		for i := 40; i < 60; i++ {
			same[i] = "Same Name"
		}
		seedMembers(t, env, org, 120, same)
		path := "/workspaces/" + org + "/members"
		b := signedIn(t, env, owner)
		walk := func(first string) (rows []string, pages []*testenv.Page) {
			for u := first; u != ""; {
				res := b.Get(t, u)
				wantPage(t, u, res, 200)
				pages = append(pages, res)
				rows = append(rows, regexp.MustCompile(`member-\d{5}@`).FindAllString(res.Body, -1)...)
				if next := nextLink(res.Body); next != "" {
					if !strings.Contains(next, "after=") {
						t.Fatalf("next link %q carries no cursor", next)
					}
					u = path + next
				} else {
					u = ""
				}
			}
			return rows, pages
		}
		rows, pages := walk(path)
		if len(pages) != 3 || len(rows) != 120 || rows[0] != "member-00000@" || rows[119] != "member-00119@" {
			t.Fatalf("walked %d pages, %d rows (%v…)", len(pages), len(rows), rows[:min(3, len(rows))])
		}
		for i, r := range rows {
			if r != fmt.Sprintf("member-%05d@", i) {
				t.Fatalf("row %d is %s", i, r)
			}
		}
		wantPage(t, "last page", pages[2], 200, "121 members", "page 3", "Previous page", owner.Email)
		rows, pages = walk(path + "?q=member-000")
		if len(pages) != 2 || len(rows) != 100 || rows[99] != "member-00099@" {
			t.Fatalf("search walked %d pages, %d rows", len(pages), len(rows))
		}
		wantPage(t, "search page 1", pages[0], 200, "Members matching “member-000” · page 1")
		wantPage(t, "search page 2", pages[1], 200, "page 2", "Previous page")
		wantPage(t, "search on one page", b.Get(t, path+"?q=same+name"), 200, "20 members matching", "Same Name")
		wantPage(t, "a cursor past the end", b.Get(t, path+"?page=9&after=9999999999999999.00000000-0000-4000-8000-000000000000"), 200, "121 members", "page 3", owner.Email)
	})
}
