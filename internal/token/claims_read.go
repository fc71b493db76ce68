package token

import (
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// readClaims reads payload as the claims MarshalJSON wrote, without
// reflection, when it is exactly that shape: MarshalJSON's members in
// its order, no white space, whole-second dates, and strings of printable
// ASCII that need no escape (every claim Gatehouse mints: ids, roles,
// tools, methods, its issuer). ok is false for anything else, and the
// caller decodes with encoding/json, whose answer this one equals
// wherever it is given (FuzzReadClaims holds the two equal).
//
// It reads only what a verified signature vouches for: access tokens
// are this service's own bytes, so every token it mints is read here,
// and anything unexpected goes the slow, general way.
func readClaims(payload []byte) (c Claims, ok bool) {
	if jwt.TimePrecision < time.Second {
		return c, false // dates written with fractions
	}
	// One copy of the payload, whose substrings the claims' strings are:
	// one allocation where a copy of each would be a dozen.
	r := claimReader{b: string(payload)}
	if !r.byte('{') {
		return c, false
	}
	r.first = true
	rc := &c.RegisteredClaims
	ok = r.optStr("iss", &rc.Issuer) && r.optStr("sub", &rc.Subject) && r.aud(&rc.Audience) &&
		r.optDate("exp", &rc.ExpiresAt) && r.optDate("nbf", &rc.NotBefore) && r.optDate("iat", &rc.IssuedAt) &&
		r.optStr("jti", &rc.ID) && r.optStr("sid", &c.SessionID) && r.optStr("key_id", &c.KeyID)
	if !ok || !r.member("org") || !r.byte('{') {
		return c, false
	}
	r.first = true
	if !r.member("id") || !r.str(&c.Org.ID) || !r.member("role") || !r.str(&c.Org.Role) ||
		!r.member("tools") || !r.strsOrNull(&c.Org.Tools) || !r.byte('}') {
		return c, false
	}
	r.first = false
	var ver int64
	ok = r.member("via") && r.str(&c.Via) && r.member("ver") && r.int(&ver, 9) &&
		r.optStr("aal", &c.AAL) && r.optStrs("amr", &c.AMR) && r.optStr("mfa", &c.MFA) && r.optStr("scope", &c.Scope) &&
		r.byte('}') && r.i == len(r.b)
	c.Ver = int(ver)
	return c, ok
}

// claimReader reads b from i; first is whether the object being read has
// had no member yet (the next one has no comma before it).
type claimReader struct {
	b     string
	i     int
	first bool
}

// byte reads c.
func (r *claimReader) byte(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// member reads member name's name and colon when they come next, and
// reports whether they did (reading nothing when not).
func (r *claimReader) member(name string) bool {
	j := r.i
	if !r.first {
		if j >= len(r.b) || r.b[j] != ',' {
			return false
		}
		j++
	}
	end := j + len(name) + 3
	if end > len(r.b) || r.b[j] != '"' || r.b[j+1:end-2] != name || r.b[end-2] != '"' || r.b[end-1] != ':' {
		return false
	}
	r.i, r.first = end, false
	return true
}

// str reads a string of printable ASCII but '"' and '\\' into s.
func (r *claimReader) str(s *string) bool {
	if !r.byte('"') {
		return false
	}
	start := r.i
	for ; r.i < len(r.b); r.i++ {
		switch c := r.b[r.i]; {
		case c == '"':
			*s = r.b[start:r.i]
			r.i++
			return true
		case c < 0x20 || c > 0x7e || c == '\\':
			return false
		}
	}
	return false
}

// strs reads an array of str's strings into v (empty: a non-nil empty
// slice, as encoding/json leaves it).
func (r *claimReader) strs(v *[]string) bool {
	if !r.byte('[') {
		return false
	}
	l := []string{}
	if r.byte(']') {
		*v = l
		return true
	}
	for {
		var s string
		if !r.str(&s) {
			return false
		}
		l = append(l, s)
		if r.byte(']') {
			*v = l
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

// strsOrNull reads null (v stays nil) or strs.
func (r *claimReader) strsOrNull(v *[]string) bool {
	if strings.HasPrefix(r.b[r.i:], "null") {
		r.i += 4
		return true
	}
	return r.strs(v)
}

// int reads a JSON number of at most digits digits and no sign, fraction
// or exponent into n.
func (r *claimReader) int(n *int64, digits int) bool {
	start := r.i
	var v int64
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		v = v*10 + int64(r.b[r.i]-'0')
		r.i++
	}
	l := r.i - start
	if l == 0 || l > digits || l > 1 && r.b[start] == '0' {
		return false // none, too long for a float64 to hold, or a leading zero JSON refuses
	}
	if r.i < len(r.b) && (r.b[r.i] == '.' || r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		return false
	}
	*n = v
	return true
}

// optStr reads member name's string into s when the member comes next.
func (r *claimReader) optStr(name string, s *string) bool {
	return !r.member(name) || r.str(s)
}

// optStrs reads member name's array into v when the member comes next.
func (r *claimReader) optStrs(name string, v *[]string) bool {
	return !r.member(name) || r.strs(v)
}

// optDate reads member name's whole seconds into d when the member comes
// next, as the JWT library reads them.
func (r *claimReader) optDate(name string, d **jwt.NumericDate) bool {
	if !r.member(name) {
		return true
	}
	var sec int64
	if !r.int(&sec, 15) {
		return false
	}
	*d = jwt.NewNumericDate(time.Unix(sec, 0))
	return true
}

// aud reads the aud member, a string or an array, when it comes next, as
// jwt.ClaimStrings reads it (an empty array: nil).
func (r *claimReader) aud(a *jwt.ClaimStrings) bool {
	if !r.member("aud") {
		return true
	}
	if r.i < len(r.b) && r.b[r.i] == '[' {
		var l []string
		if !r.strs(&l) {
			return false
		}
		if len(l) > 0 {
			*a = l
		}
		return true
	}
	var s string
	if !r.str(&s) {
		return false
	}
	*a = jwt.ClaimStrings{s}
	return true
}
