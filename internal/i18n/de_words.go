package i18n

// germanWords translates the pages' sentences and words added after the
// first catalogue (issue 30 item 10, second pass): names built in Go,
// refusals as the pages phrase them, the passkey script's messages.
var germanWords = map[string]string{
	"Type your email address, %s, to confirm.": "Geben Sie zur Bestätigung Ihre E-Mail-Adresse ein: %s.",
	// The passkey script's messages (its tag's data attributes).
	"The request failed.":                             "Die Anfrage ist fehlgeschlagen.",
	"The passkey request was cancelled or timed out.": "Die Passkey-Anfrage wurde abgebrochen oder ist abgelaufen.",
	"Something went wrong.":                           "Etwas ist schiefgelaufen.",
	"Enter the new password first.":                   "Geben Sie zuerst das neue Passwort ein.",
	// Names built in Go: a device, a sign-in's method, an activity's detail.
	"%s on %s":                   "%s auf %s",
	"to %s":                      "an %s",
	"“%s”":                       "„%s“",
	"with password":              "mit Passwort",
	"with an email link":         "mit einem Link per E-Mail",
	"with a passkey":             "mit einem Passkey",
	"with single sign-on":        "mit Single Sign-on",
	"with another provider":      "über einen anderen Anbieter",
	"with an authenticator code": "mit einem Code der Authenticator-App",
	"with a recovery code":       "mit einem Wiederherstellungscode",
	// The invitations form names its field "at least one email address".
	"at least one email address is required for email invitations": "Für Einladungen per E-Mail ist mindestens eine E-Mail-Adresse erforderlich",
}
