package gatehouse

import (
	"strings"
	"testing"
)

func TestParseEmail(t *testing.T) {
	for _, tc := range []struct{ in, key, display string }{
		{"ada@example.com", "ada@example.com", "ada@example.com"},
		{"  Ada@Example.COM\t", "ada@example.com", "ada@example.com"},
		{"idn@exämple.com", "idn@xn--exmple-cua.com", "idn@exämple.com"},
		{"IDN@EXÄMPLE.COM", "idn@xn--exmple-cua.com", "idn@exämple.com"},
		{"idn@xn--exmple-cua.com", "idn@xn--exmple-cua.com", "idn@xn--exmple-cua.com"},
		{"idn@XN--EXMPLE-CUA.COM", "idn@xn--exmple-cua.com", "idn@xn--exmple-cua.com"},
		{"idn@exa\u0308mple.com", "idn@xn--exmple-cua.com", "idn@exa\u0308mple.com"}, // decomposed ä
		{"jos\u00e9@example.com", "jos\u00e9@example.com", "jos\u00e9@example.com"},
		{"jose\u0301@example.com", "jos\u00e9@example.com", "jose\u0301@example.com"},
		{"user@faß.de", "user@xn--fa-hia.de", "user@faß.de"},
	} {
		key, display, err := ParseEmail(tc.in)
		if err != nil || key != tc.key || display != tc.display {
			t.Errorf("ParseEmail(%q) = %q, %q, %v; want %q, %q", tc.in, key, display, err, tc.key, tc.display)
		}
	}
	for _, bad := range []string{
		"", "   ", "plainaddress", "@example.com", "user@", "user@localhost", "user@example.com.",
		"u\u200bser@example.com", "user@ex\u200bample.com", // zero-width space
		"u\u200cser@example.com", "u\u200dser@example.com", "u\u2060ser@example.com", // ZWNJ, ZWJ, word joiner
		"\ufeffuser@example.com", "us\u00adr@example.com", // BOM, soft hyphen
		"user\u202e@example.com", "user@\u200eexample.com", // bidi controls
		"user@exa\u034fmple.com", "user\ufe0f@example.com", "user@\u3164example.com", // other default-ignorables
		"\uff55ser@example.com", "user@\uff45xample.com", "user\uff20example.com", // full-width u, e, @
		"user@example\u3002com", "\ufb01le@example.com", "user\u00b2@example.com", // ideographic full stop, ligature, superscript
		"user@[127.0.0.1]", "user@[ipv6:::1]", "user@127.0.0.1",
		"user@xn--abc.com", "user@ab--cd.com", "user@-example.com",
		"user@" + strings.Repeat("a", 60) + "." + strings.Repeat("ä", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + ".com",
	} {
		if key, _, err := ParseEmail(bad); err == nil {
			t.Errorf("ParseEmail(%q) = %q, nil; want an error", bad, key)
		}
	}
}

func TestEmailKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"idn@exämple.com", "idn@xn--exmple-cua.com"},
		{" Ada@Example.com ", "ada@example.com"},
		{" U\u200bser@Example.com", "u\u200bser@example.com"}, // refused: only trimmed and lower-cased
	} {
		if got := EmailKey(tc.in); got != tc.want {
			t.Errorf("EmailKey(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
