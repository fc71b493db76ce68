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

// TestNamedNoticeDeclaredTwicePanics: the sentence naming a thing is
// declared beside one page too; a second page's claim on it, with or
// without a plain sentence, stops the package at its start.
func TestNamedNoticeDeclaredTwicePanics(t *testing.T) {
	for _, n := range []pageNotices{
		{{Key: "passkey-gone", Named: "Something else: %s."}},
		{{Key: "passkey-gone", Text: "Something else."}},
		{{Key: "team-deleted", Named: "Something else: %s."}},
	} {
		before := namedNotices[n[0].Key]
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a second %s was added", n[0].Key)
				}
			}()
			n.add()
		}()
		if got := namedNotices[n[0].Key]; got != before {
			t.Errorf("%s = %q after the refused declaration; want %q", n[0].Key, got, before)
		}
	}
}
