package gatehouse

import (
	"net"
	"net/mail"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// MaxEmail bounds an address, in bytes (RFC 5321).
const MaxEmail = 254

// ParseEmail checks an address a person typed and returns its two forms:
// key, which identifies an account wherever addresses are compared (local
// part lower-cased and NFC, domain as its IDNA A-label), and display, what
// was typed, trimmed and lower-cased, which is what is stored, shown and
// mailed. Invisible characters, full-width and other compatibility forms and
// address literals are refused: IDNA would silently map or drop them, so one
// mailbox could be registered under several spellings that look alike.
func ParseEmail(raw string) (key, display string, err error) {
	e := strings.ToLower(strings.TrimSpace(raw))
	if e == "" {
		return "", "", InvalidField("email", "email is required")
	}
	for _, r := range e {
		if invisibleRune(r) {
			return "", "", InvalidField("email", "email must not contain invisible characters")
		}
		// U+3002, the ideographic full stop, is no compatibility form, but
		// IDNA reads it as a dot.
		if !norm.NFKC.IsNormalString(string(r)) || r == '\u3002' {
			return "", "", InvalidField("email", "email must not contain full-width or other compatibility characters")
		}
	}
	a, err := mail.ParseAddress(e)
	at := strings.LastIndexByte(e, '@')
	if err != nil || a.Address != e || len(e) > MaxEmail || at < 1 {
		return "", "", InvalidField("email", "email is not a valid address")
	}
	local, domain := e[:at], e[at+1:]
	if strings.HasPrefix(domain, "[") || net.ParseIP(domain) != nil {
		return "", "", InvalidField("email", "email must name a domain, not an address literal")
	}
	ascii, err := idna.Lookup.ToASCII(domain)
	if err != nil || !ValidHostname(ascii) {
		return "", "", InvalidField("email", "email is not a valid address")
	}
	key = norm.NFC.String(local) + "@" + ascii
	if len(key) > MaxEmail {
		return "", "", InvalidField("email", "email is not a valid address")
	}
	return key, e, nil
}

// NormalizeEmail returns the display form of an address checked by
// ParseEmail, for addresses that are mailed but never identify an account.
func NormalizeEmail(raw string) (string, error) {
	_, display, err := ParseEmail(raw)
	return display, err
}

// EmailKey returns ParseEmail's key of an address, typed or stored. An
// address that does not pass ParseEmail (malformed input, or one stored
// before today's rules, which kept itself as key) is only trimmed and
// lower-cased: it still names one address for rate limits and matches only
// an account it was stored as.
func EmailKey(addr string) string {
	key, _, err := ParseEmail(addr)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(addr))
	}
	return key
}

// invisibleRune reports whether r is a control, format (zero-width, bidi,
// soft hyphen, BOM), line or paragraph separator, or other default-ignorable
// character: one that renders as nothing.
func invisibleRune(r rune) bool {
	return r == unicode.ReplacementChar || unicode.In(r, unicode.C, unicode.Zl, unicode.Zp,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// ValidHostname reports whether d, in ASCII (IDNA A-labels), is a DNS name
// of two or more labels whose top-level label is not all digits.
func ValidHostname(d string) bool {
	if len(d) > 253 || !strings.Contains(d, ".") {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	// The top-level label is never all digits (rules out IP addresses).
	tld := d[strings.LastIndexByte(d, '.')+1:]
	return strings.Trim(tld, "0123456789") != ""
}
