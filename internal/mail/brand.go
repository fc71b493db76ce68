package mail

import "strings"

// Brand names the product in the mail Gatehouse writes
// (GATEHOUSE_BRAND_NAME and GATEHOUSE_BRAND_SUPPORT_URL, as on the hosted
// pages). The zero value is Gatehouse's own.
type Brand struct {
	Name       string // "" is Gatehouse
	SupportURL string // absolute; "" for none
}

// Product is the product's name.
func (b Brand) Product() string {
	if n := strings.TrimSpace(b.Name); n != "" {
		return n
	}
	return "Gatehouse"
}

// Footer is the short signature every message of ours ends with: the
// product's name and, when set, where to get help.
func (b Brand) Footer() string {
	f := "\n-- \n" + b.Product() + "\n"
	if b.SupportURL != "" {
		f += "Help: " + b.SupportURL + "\n"
	}
	return f
}

// sign ends m with b's footer, unless m is in someone else's words
// (Theirs).
func (b Brand) sign(m Message) Message {
	if !m.Theirs {
		m.Text = strings.TrimRight(m.Text, "\n") + "\n" + b.Footer()
	}
	return m
}
