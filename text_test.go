package gatehouse_test

import (
	"testing"

	"github.com/gatehouse/gatehouse"
)

// TestOneLine: names are one line of text: letters of any script, spaces
// and punctuation pass; line breaks (also U+2028, U+2029 and NEL) and
// other control characters, NUL and invalid UTF-8 do not.
func TestOneLine(t *testing.T) {
	for s, want := range map[string]bool{
		"Acme Corp": true, "Ünïcødé — ok": true, "東京チーム": true, "שלום": true, "": true,
		"a\nb": false, "a\rb": false, "a\tb": false, "a\x00b": false, "a\x7fb": false, "a\u0085b": false,
		"a\u2028b": false, "a\u2029b": false, "a\x1b[0m": false, "\xff": false,
	} {
		if got := gatehouse.OneLine(s); got != want {
			t.Errorf("OneLine(%q) = %v; want %v", s, got, want)
		}
	}
	if err := gatehouse.CheckOneLine("team.name", "a\nb"); err == nil || err.Error() != "team.name must not contain line breaks or control characters" {
		t.Errorf("CheckOneLine = %v; want the field named", err)
	}
}
