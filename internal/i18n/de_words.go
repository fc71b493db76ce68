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
	// The invitations form names its field "at least one email address".
	"at least one email address is required for email invitations": "Für Einladungen per E-Mail ist mindestens eine E-Mail-Adresse erforderlich",
}
