package pages

import "testing"

// TestNoticeDeclaredTwicePanics: a page that declares an outcome another
// page declared stops the package at its start, rather than one page's
// sentence silently replacing the other's.
func TestNoticeDeclaredTwicePanics(t *testing.T) {
	before := notices["team-created"]
	defer func() {
		if recover() == nil {
			t.Fatalf("a second team-created was added")
		}
		if got := notices["team-created"]; got != before {
			t.Fatalf("team-created = %q after the refused declaration; want %q", got, before)
		}
	}()
	pageNotices{{Key: "team-created", Text: "Something else."}}.add()
}
