package identity

import (
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/password"
)

// productName is the context word every new password is checked against
// besides the account's address (ASVS 6.2.11).
const productName = "gatehouse"

// minContextWord is the shortest part of an address a new password may not
// contain: shorter ones ("jo", "x") would refuse passwords for no reason.
const minContextWord = 4

// checkNewPassword checks a password being chosen (registration, change,
// recovery; never a sign-in) for the account at email: the length bounds,
// then the policy of docs/decisions.md ("Password policy"): not one of the
// most common passwords, and not containing the product's name, the
// address's local part (or a part of it split at . _ - +) or the first
// label of its domain, all compared case-insensitively. The 400 names the
// reason.
func checkNewPassword(field, pw, email string) error {
	if err := checkPassword(field, pw); err != nil {
		return err
	}
	if password.IsCommon(pw) {
		return gatehouse.InvalidField(field, "%s is too common; choose one that is harder to guess", field)
	}
	lower := strings.ToLower(pw)
	if strings.Contains(lower, productName) {
		return gatehouse.InvalidField(field, "%s must not contain the name %q", field, productName)
	}
	local, domain, _ := strings.Cut(strings.ToLower(email), "@")
	for _, w := range append([]string{local}, strings.FieldsFunc(local, isAddressSeparator)...) {
		if utf8.RuneCountInString(w) >= minContextWord && strings.Contains(lower, w) {
			return gatehouse.InvalidField(field, "%s must not contain your email address", field)
		}
	}
	if label, _, _ := strings.Cut(domain, "."); utf8.RuneCountInString(label) >= minContextWord && strings.Contains(lower, label) {
		return gatehouse.InvalidField(field, "%s must not contain your email address's domain name", field)
	}
	return nil
}

// isAddressSeparator splits an address's local part into the words a
// person's name or handle is made of (first.last, first_last+tag).
func isAddressSeparator(r rune) bool {
	return r == '.' || r == '_' || r == '-' || r == '+'
}
