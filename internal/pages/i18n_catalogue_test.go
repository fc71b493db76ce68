package pages_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/gatehouse/gatehouse/internal/i18n"
)

// The catalogue checks (issue 30 item 10) read the templates and the Go
// source, so that a sentence added in English anywhere a person reads it
// fails here until it goes through the catalogue with its German.

var (
	templateAction = regexp.MustCompile(`(?s)\{\{.*?\}\}`)
	templateKey    = regexp.MustCompile(`\{\{-?\s*t[fbs]* ("(?:[^"\\]|\\.)*")|\(t[fbs]* ("(?:[^"\\]|\\.)*")`)
	// pluralKeys are the two forms of {{plural n "1 member" "%d members"}}.
	pluralKeys = regexp.MustCompile(`plural \S+ ("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*")`)
	// fieldKeys are the label and hint of a form field: (field . "name" "Label" "Hint").
	fieldKeys = regexp.MustCompile(`\(field \S+ (?:"[^"]*"|\([^)]*\)) ("(?:[^"\\]|\\.)*"|\([^)]*\)) ("(?:[^"\\]|\\.)*")`)
)

// translatedAttrs are the attributes a person reads (or hears).
var translatedAttrs = map[string]bool{"aria-label": true, "placeholder": true, "title": true, "alt": true}

// literalTexts are the texts of a template a person would read that are
// not produced by an action: text between tags and the values of
// translatedAttrs, outside <code>, <pre>, <script> and <style>.
func literalTexts(src string) []string {
	var out []string
	// Actions become a NUL, which is neither text nor markup.
	s := templateAction.ReplaceAllString(src, "\x00")
	inTag, quote, skip := false, byte(0), 0
	var text, attr strings.Builder
	attrName := ""
	flush := func(b *strings.Builder) {
		if t := strings.TrimSpace(b.String()); t != "" {
			for _, part := range strings.Split(t, "\x00") {
				if strings.IndexFunc(part, unicode.IsLetter) >= 0 {
					out = append(out, strings.Join(strings.Fields(html.UnescapeString(part)), " "))
				}
			}
		}
		b.Reset()
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case !inTag && c == '<':
			if skip == 0 {
				flush(&text)
			}
			text.Reset()
			inTag = true
			name := strings.ToLower(strings.FieldsFunc(s[i+1:], func(r rune) bool { return r == ' ' || r == '>' || r == '\n' || r == '\x00' })[0])
			switch name {
			case "code", "pre", "script", "style":
				skip++
			case "/code", "/pre", "/script", "/style":
				skip--
			}
		case !inTag:
			text.WriteByte(c)
		case quote != 0 && c == quote:
			if translatedAttrs[attrName] {
				flush(&attr)
			}
			attr.Reset()
			quote = 0
		case quote != 0:
			attr.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
			before := strings.TrimRight(s[:i], " =")
			attrName = strings.ToLower(before[strings.LastIndexAny(before, " \n\x00")+1:])
		case c == '>':
			inTag = false
		}
	}
	if skip == 0 {
		flush(&text)
	}
	return out
}

// TestTemplatesHaveNoLiteralText: every word of the templates goes
// through {{t}} or {{tf}}.
func TestTemplatesHaveNoLiteralText(t *testing.T) {
	files, _ := filepath.Glob("templates/*.html")
	if len(files) == 0 {
		t.Fatal("no templates")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range literalTexts(string(src)) {
			t.Errorf("%s: %q is not in the catalogue: write {{t %q}}", f, text, text)
		}
	}
}

// TestLiteralTextsCatches: the check sees text between tags and in the
// attributes a person reads, and not in code or in actions.
func TestLiteralTextsCatches(t *testing.T) {
	got := literalTexts(`<p>Hello {{.Name}}, welcome</p><button aria-label="Remove {{.Name}}">{{t "Remove"}}</button><code>x_y</code><input placeholder="e.g. Laptop" value="v">`)
	want := []string{"Hello", ", welcome", "Remove", "e.g. Laptop"}
	if !slices.Equal(got, want) {
		t.Fatalf("literal texts %q, want %q", got, want)
	}
}

// pageFields are the fields of the pages' data whose Go-set sentences
// render translates (page.translate) or that are catalogue keys already.
var pageFields = map[string]bool{"Title": true, "Error": true, "Message": true, "Notice": true, "Intro": true, "Button": true, "Text": true, "Label": true, "Hint": true, "What": true, "Detail": true,
	"Named": true} // a pageNotices entry's named sentence

// goKeys are the catalogue keys of the pages' Go source: the sentences
// given to pageFields, the values of the notices maps and the formats
// given to tr; bad are the places a sentence is built by concatenation,
// which the catalogue cannot translate.
func goKeys(t *testing.T, dir string, maps ...string) (keys map[string]string, bad []string) {
	keys = map[string]string{}
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	check := func(where token.Pos, e ast.Expr) {
		if s, ok := lit(e); ok {
			if strings.IndexFunc(s, unicode.IsLetter) >= 0 {
				keys[s] = fset.Position(where).String()
			}
			return
		}
		// A concatenation with a literal word anywhere in it.
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			bin, ok := n.(*ast.BinaryExpr)
			if !ok || bin.Op != token.ADD || found {
				return !found
			}
			for _, side := range []ast.Expr{bin.X, bin.Y} {
				if s, ok := lit(side); ok && strings.IndexFunc(s, unicode.IsLetter) >= 0 {
					found = true
				}
			}
			return true
		})
		if found {
			bad = append(bad, fset.Position(where).String())
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
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && pageFields[id.Name] {
					check(n.Pos(), n.Value)
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && pageFields[sel.Sel.Name] && i < len(n.Rhs) {
						check(n.Pos(), n.Rhs[i])
					}
				}
			case *ast.CompositeLit:
				// A workspace page's link {key, Label, path}.
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "orgLink" && len(n.Elts) == 3 {
					check(n.Pos(), n.Elts[1])
				}
				if at, ok := n.Type.(*ast.ArrayType); ok {
					if id, ok := at.Elt.(*ast.Ident); ok && id.Name == "orgLink" {
						for _, e := range n.Elts {
							if el, ok := e.(*ast.CompositeLit); ok && len(el.Elts) == 3 {
								check(el.Pos(), el.Elts[1])
							}
						}
					}
				}
			case *ast.CallExpr:
				// A console page's title: c.page(r, title, nav).
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "page" && len(n.Args) == 3 {
					check(n.Pos(), n.Args[1])
				}
				// orgLinks' add(shown, key, Label).
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "add" && len(n.Args) == 3 {
					check(n.Pos(), n.Args[2])
				}
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "tr" || id.Name == "trf") && len(n.Args) > 1 {
					check(n.Pos(), n.Args[1])
				}
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "T" || sel.Sel.Name == "Tf") && len(n.Args) > 1 {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "i18n" {
						check(n.Pos(), n.Args[1])
					}
				}
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if slices.Contains(maps, name.Name) && i < len(n.Values) {
						ast.Inspect(n.Values[i], func(m ast.Node) bool {
							if kv, ok := m.(*ast.KeyValueExpr); ok {
								check(kv.Pos(), kv.Value)
							}
							// A navigation entry {Key, Label, Path}: its label.
							if cl, ok := m.(*ast.CompositeLit); ok && len(cl.Elts) == 3 {
								if _, isKV := cl.Elts[1].(*ast.KeyValueExpr); !isKV {
									check(cl.Elts[1].Pos(), cl.Elts[1])
								}
							}
							return true
						})
					}
				}
			}
			return true
		})
	}
	return keys, bad
}

// TestCatalogueHasEveryPageKey: every key the templates and the pages'
// Go source use has its German.
func TestCatalogueHasEveryPageKey(t *testing.T) {
	keys, bad := goKeys(t, ".", "notices", "consoleNav", "orgNav", "auditLabels", "signInMethods")
	for _, where := range bad {
		t.Errorf("%s: a sentence built with +; use tr(r, format, args...)", where)
	}
	files, _ := filepath.Glob("templates/*.html")
	for _, f := range files {
		src, _ := os.ReadFile(f)
		var quoted []string
		for _, m := range templateKey.FindAllStringSubmatch(string(src), -1) {
			quoted = append(quoted, m[1]+m[2])
		}
		for _, m := range fieldKeys.FindAllStringSubmatch(string(src), -1) {
			quoted = append(quoted, m[1], m[2])
		}
		for _, m := range pluralKeys.FindAllStringSubmatch(string(src), -1) {
			quoted = append(quoted, m[1], m[2])
		}
		for _, q := range quoted {
			if !strings.HasPrefix(q, `"`) || q == `""` {
				continue
			}
			k, err := strconv.Unquote(q)
			if err != nil {
				t.Fatalf("%s: key %s: %v", f, q, err)
			}
			keys[k] = f
		}
	}
	if len(keys) < 100 {
		t.Fatalf("only %d keys found", len(keys))
	}
	var missing []string
	for k, where := range keys {
		if !i18n.Has(i18n.German, k) {
			missing = append(missing, where+": "+strconv.Quote(k))
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("no German for %s", m)
	}
}
