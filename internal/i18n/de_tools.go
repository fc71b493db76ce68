package i18n

// germanTools translates the tools' mail (internal/tools/sign: signing
// requests and reminders; internal/tools/forms: destination confirmations
// and submission notices). The sender's own words (a document's message,
// a form's autoresponder) are sent as written.
var germanTools = map[string]string{
	"Please sign: %s":          "Bitte unterschreiben: %s",
	"Reminder: please sign %s": "Erinnerung: Bitte unterschreiben Sie %s",
	"Hello %s,\n\nYou are asked to sign the document %q.\n":                                          "Hallo %s,\n\nSie werden gebeten, das Dokument %q zu unterschreiben.\n",
	"Hello %s,\n\nThis is a reminder: the document %q is still waiting for your signature.\n":        "Hallo %s,\n\nzur Erinnerung: Das Dokument %q wartet noch auf Ihre Unterschrift.\n",
	"\nMessage from the sender:\n\n%s\n":                                                             "\nNachricht des Absenders:\n\n%s\n",
	"\nOpen this link to read and sign it:\n\n%s\n":                                                  "\nÖffnen Sie diesen Link, um es zu lesen und zu unterschreiben:\n\n%s\n",
	"\nThe link works until %s.\n":                                                                   "\nDer Link funktioniert bis %s.\n",
	"\nThe link is yours alone: do not forward this message. If you did not expect it, ignore it.\n": "\nDer Link gilt nur für Sie: Leiten Sie diese Nachricht nicht weiter. Wenn Sie sie nicht erwartet haben, ignorieren Sie sie.\n",
	"Confirm that you want form submissions by email":                                                "Bestätigen Sie, dass Sie Formulareinsendungen per E-Mail erhalten möchten",
	"Someone asked %s to email the submissions of the form %q to %s.\n\nTo receive them, open this link within %d days and press the button:\n\n%s?token=%s\n\nIf you did not expect this, ignore this message: nothing will be sent to you.\n": "Jemand hat %s gebeten, die Einsendungen des Formulars %q per E-Mail an %s zu senden.\n\nUm sie zu erhalten, öffnen Sie innerhalb von %d Tagen diesen Link und drücken Sie die Schaltfläche:\n\n%s?token=%s\n\nWenn Sie das nicht erwartet haben, ignorieren Sie diese Nachricht: Ihnen wird nichts gesendet.\n",
	"New submission: %s":               "Neue Einsendung: %s",
	"A new submission to %s (%s):\n\n": "Eine neue Einsendung an %s (%s):\n\n",
}
