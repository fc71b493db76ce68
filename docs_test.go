package gatehouse_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeSpan is a Markdown code span: where the docs name files and folders.
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// fileExt names the kinds of file the docs point to by their bare name.
var fileExt = regexp.MustCompile(`^[\w.-]+\.(go|sql|js|json|md|sh|txt|css|html|tmpl)$`)

// TestDocsNamePathsThatExist checks that every file or folder that
// docs/architecture.md and the README's layout section name exists: a path
// with a slash from the repository root (or under internal/, as
// "sqlstore/jobs.go" is written), a bare file name somewhere in the tree.
// Routes ("/v1/orgs/*") and Go identifiers after a path
// ("internal/revocation.List") are not files; the first are skipped, the
// second checked for their path part.
func TestDocsNamePathsThatExist(t *testing.T) {
	names := map[string]bool{}
	filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names[d.Name()] = true
		}
		return nil
	})
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal(`README.md has no "## Layout" section`)
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	arch, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for doc, text := range map[string]string{"docs/architecture.md": string(arch), "README.md (Layout)": layout} {
		for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
			if missing := missingPath(m[1], names); missing != "" {
				t.Errorf("%s names %q, which does not exist", doc, missing)
			}
		}
	}
}

// missingPath returns the path span names when it is a file or folder of the
// repository that does not exist, and "" otherwise (it exists, or the span is
// not a path).
func missingPath(span string, names map[string]bool) string {
	span = strings.TrimSpace(span)
	if strings.ContainsAny(span, " *{}…") || strings.HasPrefix(span, "/") || strings.Contains(span, "://") {
		return "" // a route, a pattern or a command, not a path
	}
	if !strings.Contains(span, "/") {
		if fileExt.MatchString(span) && !names[span] {
			return span
		}
		return ""
	}
	p := strings.TrimSuffix(span, "/")
	if dir, ident, ok := strings.Cut(filepath.Base(p), "."); ok && ident != "" && ident[0] >= 'A' && ident[0] <= 'Z' {
		p = filepath.Join(filepath.Dir(p), dir) // internal/revocation.List
	}
	for _, c := range []string{p, filepath.Join("internal", p)} {
		if _, err := os.Stat(c); err == nil {
			return ""
		}
	}
	return span
}
