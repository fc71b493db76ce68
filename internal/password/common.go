package password

import (
	_ "embed"
	"strings"
	"sync"
)

// commonList is the 30,000 most common passwords, most common first, one a
// line, lower-cased: the first 30,000 entries of zxcvbn's passwords list
// (data/passwords.txt of github.com/trustelem/zxcvbn v1.0.1, MIT; the
// ranking of Dropbox's zxcvbn 4.4.2), generated once and committed.
// docs/decisions.md ("Password policy") gives its provenance and how to
// regenerate it.
//
//go:embed common.txt
var commonList string

// commonSet is commonList as a set, built on first use.
var commonSet = sync.OnceValue(func() map[string]struct{} {
	lines := strings.Split(strings.TrimSpace(commonList), "\n")
	set := make(map[string]struct{}, len(lines))
	for _, l := range lines {
		set[l] = struct{}{}
	}
	return set
})

// CommonCount is how many passwords IsCommon knows.
func CommonCount() int { return len(commonSet()) }

// IsCommon reports whether pw, compared case-insensitively, is one of the
// 30,000 most common passwords.
func IsCommon(pw string) bool {
	_, ok := commonSet()[strings.ToLower(pw)]
	return ok
}
