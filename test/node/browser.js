// A person on Gatehouse's hosted pages, played with fetch and a one-cookie
// jar: signs in with a password, then approves authorization requests on
// the consent page. It uses only the public pages, no test backdoor.

export class Browser {
  constructor(base) {
    this.base = base
    this.cookies = new Map()
  }

  async fetch(url, init = {}) {
    const headers = new Headers(init.headers)
    if (this.cookies.size) {
      headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '))
    }
    const res = await fetch(new URL(url, this.base), { ...init, headers, redirect: 'manual' })
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';')
      const i = pair.indexOf('=')
      const name = pair.slice(0, i).trim()
      const value = pair.slice(i + 1).trim()
      if (attrs.some((a) => /^\s*max-age=(0|-)/i.test(a)) || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return res
  }

  async post(url, fields) {
    return this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
  }

  async signIn(email, password) {
    const res = await this.post('/signin', { email, password, next: '/signin' })
    if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`)
  }

  // approve opens an authorization URL, picks the first workspace offered
  // (or orgId) and returns the URL the server redirects the browser to.
  async approve(authorizationUrl, orgId) {
    const page = await this.fetch(authorizationUrl)
    const html = await page.text()
    if (page.status !== 200) throw new Error(`authorize page answered ${page.status}: ${html}`)
    const fields = {}
    for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
      fields[unescape(m[1])] = unescape(m[2])
    }
    const org = orgId ?? html.match(/name="org_id" value="([^"]*)"/)?.[1]
    if (!org) throw new Error('no workspace offered on the consent page')
    const res = await this.post('/oauth/authorize', { ...fields, org_id: org, decision: 'approve' })
    if (res.status !== 303) throw new Error(`consent answered ${res.status}: ${await res.text()}`)
    return new URL(res.headers.get('location'))
  }
}

function unescape(s) {
  return s
    .replaceAll('&#34;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&')
}
