package pages

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// auditWriters are the functions that write audit entries, by package
// folder and name: the argument that is the action and what the entry's
// action puts before it ("*." for the webhooks', written under the tool
// of their webhook).
var auditWriters = []struct {
	dir, fn string
	arg     int
	prefix  string
}{
	{"", "Audit", 4, "identity."}, // workspace.Service.Audit, called from every module
	{"internal/identity", "auditUser", 3, "identity."},
	{"internal/identity", "auditPersonal", 4, "identity."},
	{"internal/identity", "auditLater", 1, "identity."},
	{"internal/identity", "auditPasskey", 3, "identity."},
	{"internal/scim", "audit", 3, "identity."},
	{"internal/sso", "auditUser", 3, "identity."},
	{"internal/tools/sign", "audit", 4, "sign."},
	{"internal/tools/tasks", "audit", 4, "tasks.issue."},
	{"internal/tools/links", "audit", 4, "links."},
	{"internal/tools/forms", "audit", 4, "forms."},
	{"internal/webhooks", "audit", 4, "*."},
}

// writtenActions finds, in the module's code, every action an audit
// writer is called with: a string literal, a literal joined to a variable,
// or a variable given literals in the calling function (a parameter of
// another writer is covered at that writer's calls). unresolved lists the
// calls it could not read.
func writtenActions(t *testing.T) (actions map[string]string, unresolved []string) {
	t.Helper()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	actions = map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		dir = filepath.ToSlash(dir)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				name := ""
				switch c := call.Fun.(type) {
				case *ast.SelectorExpr:
					name = c.Sel.Name
				case *ast.Ident:
					name = c.Name
				}
				for _, w := range auditWriters {
					if w.fn != name || (w.dir != "" && w.dir != dir) || len(call.Args) <= w.arg {
						continue
					}
					if w.dir == "" && len(call.Args) != 8 { // Audit(ctx, st, org, actor, action, type, id, meta)
						continue
					}
					where := fset.Position(call.Pos()).String()
					vals, ok := actionValues(fn, call.Args[w.arg])
					if !ok {
						unresolved = append(unresolved, where)
					}
					for _, v := range vals {
						actions[w.prefix+v] = where
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return actions, unresolved
}

// actionValues are the strings e can be in fn: a literal, a literal joined
// to a variable, or a variable fn assigns literals to. ok is true with no
// values for a parameter of fn when fn is a writer itself.
func actionValues(fn *ast.FuncDecl, e ast.Expr) (vals []string, ok bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(x.Value)
		return []string{s}, err == nil
	case *ast.BinaryExpr:
		left, okl := actionValues(fn, x.X)
		right, okr := actionValues(fn, x.Y)
		for _, l := range left {
			for _, r := range right {
				vals = append(vals, l+r)
			}
		}
		return vals, okl && okr && len(vals) > 0
	case *ast.SelectorExpr:
		// The queue of entries written later carries the action given to
		// auditLater, a writer whose calls are read.
		return nil, fn.Name.Name == "writeAudits" && x.Sel.Name == "action"
	case *ast.Ident:
		for _, f := range fn.Type.Params.List {
			for _, n := range f.Names {
				if n.Name == x.Name {
					isWriter := slices.ContainsFunc(auditWriters, func(w struct {
						dir, fn string
						arg     int
						prefix  string
					}) bool {
						return w.fn == fn.Name.Name
					})
					return nil, isWriter
				}
			}
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok {
				for i, l := range as.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name == x.Name && i < len(as.Rhs) {
						if lit, ok := as.Rhs[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							vals = append(vals, s)
						}
					}
				}
			}
			return true
		})
		return vals, len(vals) > 0
	}
	return nil, false
}

// TestAuditLabels: every action the code writes to the audit log has a
// plain-language label on the audit page.
func TestAuditLabels(t *testing.T) {
	actions, unresolved := writtenActions(t)
	for _, where := range unresolved {
		t.Errorf("%s: cannot tell the audit action written here; give it a literal", where)
	}
	if len(actions) < 50 {
		t.Fatalf("found %d actions written; the scan misses the writers", len(actions))
	}
	for _, a := range slices.Sorted(maps.Keys(actions)) {
		if auditLabels[a] == "" {
			t.Errorf("action %s (written at %s) has no label in auditLabels", a, actions[a])
		}
	}
	for a := range auditLabels {
		if _, ok := actions[a]; !ok {
			t.Errorf("auditLabels has %s, which nothing writes", a)
		}
	}
}
