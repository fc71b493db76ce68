package pages_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// errorSources are the domain packages whose refusals the pages show (in
// a red line, next to a field or on the error page), relative to this
// package.
var errorSources = []string{"../..", "../identity", "../workspace", "../sso", "../tools/forms"}

// domainMessages are the messages (fmt formats) of the domain errors made
// in dir: the literal format given to gatehouse.Errorf, Invalid and
// InvalidField (Errorf, Invalid and InvalidField in the root package
// itself), and the Message of an Error literal.
func domainMessages(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	formatArg := map[string]int{"Errorf": 1, "Invalid": 0, "InvalidField": 1}
	add := func(e ast.Expr) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return
		}
		if s, err := strconv.Unquote(b.Value); err == nil {
			out[s] = fset.Position(b.Pos()).String()
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		root := file.Name.Name == "gatehouse"
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					if x, ok := fn.X.(*ast.Ident); ok && x.Name == "gatehouse" {
						name = fn.Sel.Name
					}
				case *ast.Ident:
					if root {
						name = fn.Name
					}
				}
				if i, ok := formatArg[name]; ok && i < len(n.Args) {
					add(n.Args[i])
				}
			case *ast.CompositeLit:
				typ := ""
				switch tt := n.Type.(type) {
				case *ast.SelectorExpr:
					if x, ok := tt.X.(*ast.Ident); ok && x.Name == "gatehouse" {
						typ = tt.Sel.Name
					}
				case *ast.Ident:
					if root {
						typ = tt.Name
					}
				}
				if typ != "Error" {
					return true
				}
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Message" {
							add(kv.Value)
						}
					}
				}
			}
			return true
		})
	}
	return out
}

// TestDomainErrorsHaveGerman: every message a domain error the pages show
// can carry has its German in the catalogue, so a German page never shows
// a refusal in English.
func TestDomainErrorsHaveGerman(t *testing.T) {
	var missing []string
	total := 0
	for _, dir := range errorSources {
		for msg, where := range domainMessages(t, dir) {
			total++
			if !i18n.Has(i18n.German, msg) {
				missing = append(missing, where+": "+strconv.Quote(msg))
			}
		}
	}
	if total < 100 {
		t.Fatalf("only %d messages found", total)
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("no German for %s", m)
	}
}

// TestGermanRefusals: a domain's refusal shown on a German page (next to
// its field, above the form, in a card) is German, values and field names
// included, while the JSON API answers the same refusal in English.
func TestGermanRefusals(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Hafen", [2]string{a.UserID, "owner"}, [2]string{member.UserID, "member"})
		b := speaking(signedIn(t, env, a), "de-DE,de;q=0.9")
		base := "/workspaces/" + org

		cases := []struct {
			name, path string
			form       url.Values
			status     int
			want       string
		}{
			{"wrong current password", "/account/password", url.Values{"current_password": {"wrong one!"}, "new_password": {"a new passphrase"}},
				403, `id="current_password-error">Das aktuelle Passwort ist falsch.`},
			{"short new password (a field label and a number)", "/account/password", url.Values{"current_password": {a.Password}, "new_password": {"kurz"}},
				400, `id="new_password-error">Neues Passwort muss mindestens 8 Zeichen lang sein.`},
			{"common new password", "/account/password", url.Values{"current_password": {a.Password}, "new_password": {"qwerty123"}},
				400, "Neues Passwort ist zu verbreitet; wählen Sie eines, das schwerer zu erraten ist."},
			{"short workspace name", "/account/workspaces", url.Values{"name": {"x"}},
				400, "Der Name muss mindestens 2 Zeichen lang sein."},
			{"invalid domain (a quoted value)", base + "/domains", url.Values{"domain": {"nicht eine domain"}},
				400, "Die Domain &#34;nicht eine domain&#34; ist kein gültiger Domainname."},
			{"no addresses", base + "/invitations", url.Values{"kind": {"email"}, "role": {"member"}},
				400, "Für Einladungen per E-Mail ist mindestens eine E-Mail-Adresse erforderlich."},
			{"a member invited again (a name)", base + "/invitations", url.Values{"kind": {"email"}, "role": {"member"}, "emails": {member.Email}},
				409, " ist bereits Mitglied dieses Arbeitsbereichs."},
		}
		for _, c := range cases {
			res := b.Post(t, c.path, c.form)
			if res.Status != c.status {
				t.Fatalf("%s: status %d, want %d\n%.2000s", c.name, res.Status, c.status, res.Body)
			}
			if !strings.Contains(res.Body, c.want) {
				t.Errorf("%s: no %q in %q", c.name, c.want, errorLines(res.Body))
			}
			if leaks := englishLeaks(res.Body); len(leaks) > 0 {
				t.Errorf("%s shows English in German: %q", c.name, leaks)
			}
		}

		// Deleting the account while the only owner of a workspace with
		// members: the refusal names the workspace, in German.
		res := b.Post(t, "/account/delete", url.Values{"confirm": {a.Email}})
		wantPage(t, "delete refused", res, 409, "Sie sind der einzige Inhaber von Hafen, das noch weitere Mitglieder hat")

		// The JSON API stays English whatever the request's language.
		req, _ := http.NewRequest("POST", env.URL+"/v1/me/password", strings.NewReader(`{"current_password":"wrong one!","new_password":"a new passphrase"}`))
		req.Header.Set("Authorization", "Bearer "+a.Access)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept-Language", "de")
		api, err := env.Send(req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(api.Body), `"current password is wrong"`) {
			t.Fatalf("API refusal in German? %d %s", api.Status, api.Body)
		}
	})
}

// errorLines are the lines of body that show an error.
func errorLines(body string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, "error") || strings.Contains(l, `role="alert"`) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}
