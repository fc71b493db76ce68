// Gatehouse's authorization server against two real JavaScript clients:
// oauth4webapi (strict, conformance-minded) and the MCP TypeScript SDK's
// auth(). Needs GATEHOUSE_URL, TEST_EMAIL and TEST_PASSWORD: the Go test
// TestNodeClients starts a server, registers the user and runs this file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as oauth from 'oauth4webapi'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { Browser } from './browser.js'

const base = process.env.GATEHOUSE_URL
const email = process.env.TEST_EMAIL
const password = process.env.TEST_PASSWORD
if (!base || !email || !password) {
  throw new Error('set GATEHOUSE_URL, TEST_EMAIL and TEST_PASSWORD (go test -run TestNodeClients ./internal/oauth does)')
}
// Gatehouse runs on plain-http loopback in tests.
const insecure = { [oauth.allowInsecureRequests]: true }
const redirectUri = 'http://127.0.0.1:43110/callback'

test('oauth4webapi: discovery, registration, PKCE, code exchange, refresh, revocation', async () => {
  const issuer = new URL(base)
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }))
  assert.equal(as.issuer, base)
  assert.deepEqual(as.code_challenge_methods_supported, ['S256'])

  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { client_name: 'oauth4webapi test', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
      insecure,
    ),
  )
  assert.ok(client.client_id)
  const clientAuth = oauth.None()

  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(as.authorization_endpoint)
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()

  const browser = new Browser(base)
  await browser.signIn(email, password)
  const callback = await browser.approve(url)
  // Checks state and, as discovery advertises it, iss (RFC 9207).
  const params = oauth.validateAuthResponse(as, client, callback, state)

  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, insecure),
  )
  assert.equal(tokens.token_type, 'bearer')
  assert.equal(typeof tokens.expires_in, 'number')
  assert.ok(tokens.refresh_token)

  const me = await fetch(new URL('/v1/auth/me', base), { headers: { authorization: `Bearer ${tokens.access_token}` } })
  assert.equal(me.status, 200)
  assert.equal((await me.json()).user.email, email)

  const refreshed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token, insecure),
  )
  assert.ok(refreshed.access_token)
  assert.notEqual(refreshed.refresh_token, tokens.refresh_token)

  // The rotated refresh token is dead.
  await assert.rejects(
    async () =>
      oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token, insecure)),
    (err) => err instanceof oauth.ResponseBodyError && err.error === 'invalid_grant',
  )

  // Token revocation (RFC 7009) from the discovered revocation_endpoint:
  // the live refresh token ends its session, so it is refused at the token
  // endpoint and the session's access token at /v1/auth/me.
  assert.equal(as.revocation_endpoint, new URL('/oauth/revoke', base).href)
  await oauth.processRevocationResponse(
    await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token, {
      ...insecure,
      additionalParameters: { token_type_hint: 'refresh_token' },
    }),
  )
  await assert.rejects(
    async () =>
      oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token, insecure)),
    (err) => err instanceof oauth.ResponseBodyError && err.error === 'invalid_grant',
  )
  const deadline = Date.now() + 2000
  let status
  do {
    status = (await fetch(new URL('/v1/auth/me', base), { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status
  } while (status !== 401 && Date.now() < deadline && (await new Promise((r) => setTimeout(r, 20)), true))
  assert.equal(status, 401)
})

// An OAuthClientProvider that keeps everything in memory and hands the
// authorization URL to the scripted browser.
class MemoryProvider {
  constructor() {
    this.authorizationUrl = undefined
  }
  get redirectUrl() {
    return redirectUri
  }
  get clientMetadata() {
    return {
      client_name: 'MCP TypeScript SDK test',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  state() {
    this._state = oauth.generateRandomState()
    return this._state
  }
  clientInformation() {
    return this._client
  }
  saveClientInformation(info) {
    this._client = info
  }
  tokens() {
    return this._tokens
  }
  saveTokens(tokens) {
    this._tokens = tokens
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(v) {
    this._verifier = v
  }
  codeVerifier() {
    return this._verifier
  }
}

test('MCP TypeScript SDK auth(): from the tool API to a working token', async () => {
  const serverUrl = new URL('/tasks/v1/issues', base)
  const unauth = await fetch(serverUrl)
  assert.equal(unauth.status, 401)
  assert.match(unauth.headers.get('www-authenticate'), /resource_metadata="/)

  const provider = new MemoryProvider()
  assert.equal(await auth(provider, { serverUrl }), 'REDIRECT')
  assert.ok(provider.authorizationUrl, 'the SDK asked for the browser')
  assert.equal(provider.authorizationUrl.searchParams.get('code_challenge_method'), 'S256')
  assert.ok(provider.authorizationUrl.searchParams.get('resource'), 'the SDK sends resource')

  const browser = new Browser(base)
  await browser.signIn(email, password)
  const callback = await browser.approve(provider.authorizationUrl)
  assert.equal(callback.searchParams.get('state'), provider._state)
  assert.equal(callback.searchParams.get('iss'), base)

  assert.equal(await auth(provider, { serverUrl, authorizationCode: callback.searchParams.get('code') }), 'AUTHORIZED')
  const { access_token, refresh_token } = provider.tokens()
  assert.ok(access_token && refresh_token)

  const authed = await fetch(serverUrl, { headers: { authorization: `Bearer ${access_token}` } })
  assert.equal(authed.status, 200, 'authenticated: the Tasks API answers with its issue list')

  // The SDK refreshes with the stored refresh token (and resource).
  provider.saveTokens({ ...provider.tokens(), access_token: 'expired' })
  assert.equal(await auth(provider, { serverUrl }), 'AUTHORIZED')
  assert.notEqual(provider.tokens().refresh_token, refresh_token)
})
