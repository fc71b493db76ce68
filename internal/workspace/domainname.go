package workspace

import (
	"strings"

	"golang.org/x/net/idna"

	"github.com/gatehouse/gatehouse"
)

// NormalizeDomain turns what a person types into the domain it names: the
// scheme, a "www." prefix, any path, query, port and trailing dot are
// stripped, the rest lowercased and converted to ASCII (IDNA).
func NormalizeDomain(raw string) (string, error) {
	d := strings.TrimSpace(raw)
	if d == "" {
		return "", gatehouse.InvalidField("domain", "domain is required")
	}
	if i := strings.Index(d, "://"); i >= 0 {
		d = d[i+3:]
	}
	if i := strings.IndexAny(d, "/?#"); i >= 0 {
		d = d[:i]
	}
	if i := strings.LastIndexByte(d, '@'); i >= 0 { // user@ in a URL, or an address
		d = d[i+1:]
	}
	if i := strings.LastIndexByte(d, ':'); i >= 0 {
		d = d[:i]
	}
	d = strings.TrimSuffix(strings.ToLower(d), ".")
	d = strings.TrimPrefix(d, "www.")
	ascii, err := idna.Lookup.ToASCII(d)
	if err != nil || !gatehouse.ValidHostname(ascii) {
		return "", gatehouse.InvalidField("domain", "domain %q is not a valid domain name", raw)
	}
	return ascii, nil
}

// publicEmailDomains are mailbox providers anyone can sign up with: a claim
// on one would offer the org to strangers.
var publicEmailDomains = setOf(strings.Fields(`
		gmail.com googlemail.com outlook.com hotmail.com hotmail.co.uk hotmail.fr hotmail.de hotmail.it hotmail.es
		live.com live.co.uk live.fr msn.com passport.com windowslive.com
		yahoo.com yahoo.co.uk yahoo.fr yahoo.de yahoo.it yahoo.es yahoo.ca yahoo.com.au yahoo.co.in yahoo.co.jp
		ymail.com rocketmail.com aol.com aim.com icloud.com me.com mac.com
		proton.me protonmail.com protonmail.ch pm.me tutanota.com tutanota.de tuta.io tutamail.com
		gmx.com gmx.net gmx.de gmx.at gmx.ch web.de t-online.de freenet.de mail.com email.com
		zoho.com zohomail.com yandex.com yandex.ru ya.ru mail.ru bk.ru inbox.ru list.ru rambler.ru
		qq.com 163.com 126.com yeah.net sina.com sohu.com aliyun.com naver.com daum.net hanmail.net
		fastmail.com fastmail.fm hey.com duck.com mailbox.org posteo.de posteo.net runbox.com
		orange.fr wanadoo.fr free.fr laposte.net sfr.fr libero.it virgilio.it tiscali.it alice.it
		btinternet.com sky.com virginmedia.com ntlworld.com blueyonder.co.uk talktalk.net
		comcast.net verizon.net att.net sbcglobal.net bellsouth.net cox.net charter.net earthlink.net
		rediffmail.com seznam.cz wp.pl o2.pl onet.pl interia.pl
		bol.com.br uol.com.br terra.com.br
		hushmail.com lycos.com inbox.com mail.ee
	`))

func setOf(items []string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}

// IsPublicEmailDomain reports whether d is a public mailbox provider.
func IsPublicEmailDomain(d string) bool { return publicEmailDomains[d] }
