package gatehouse_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse"
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

// TestSecurityEventsDocumented checks that docs/security-logging.md lists
// every security event, that every event it names is one, and that each
// is reported somewhere in the code.
func TestSecurityEventsDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/security-logging.md")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, e := range gatehouse.SecurityEvents() {
		known[string(e)] = true
		if !strings.Contains(string(doc), "`"+string(e)+"`") {
			t.Errorf("docs/security-logging.md does not list %s", e)
		}
	}
	for _, m := range regexp.MustCompile("\\| `((?:auth|http)\\.[a-z_.]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		if !known[m[1]] {
			t.Errorf("docs/security-logging.md lists %s, which is no gatehouse.SecurityEvent", m[1])
		}
	}
	// Each constant is used outside events.go, and no event name is
	// written as a bare string in the code.
	consts := regexp.MustCompile(`(?m)^\t(Event\w+) +SecurityEvent = "([^"]+)"`).FindAllStringSubmatch(mustRead(t, "events.go"), -1)
	if len(consts) != len(known) {
		t.Errorf("events.go declares %d events, SecurityEvents lists %d", len(consts), len(known))
	}
	used := map[string]bool{}
	filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || p == "events.go" {
			return nil
		}
		src := mustRead(t, p)
		for _, c := range consts {
			if strings.Contains(src, "gatehouse."+c[1]) {
				used[c[1]] = true
			}
			if strings.Contains(src, `"`+c[2]+`"`) {
				t.Errorf("%s writes the event name %q as a string: use gatehouse.%s", p, c[2], c[1])
			}
		}
		return nil
	})
	for _, c := range consts {
		if !used[c[1]] {
			t.Errorf("gatehouse.%s is reported nowhere", c[1])
		}
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
