// Gatehouse's MCP server end to end with the MCP TypeScript SDK's client:
// from the 401, discovery (the protected resource's metadata it names, then
// the authorization server's), registration by client ID metadata document
// (the client_id is the https URL of its document, which Gatehouse fetches;
// internal/mcp's TestNodeMCP serves it), authorization with PKCE and
// resource={mcp_url}, initialize, tools/list, create and read an issue, a
// 403 insufficient_scope on a write with a read-only token and the step-up,
// then the open session told (notifications/tools/list_changed) and its tool
// list shrinking once the workspace turns Tasks off. Needs GATEHOUSE_URL,
// TEST_EMAIL, TEST_PASSWORD, ORG_ID, TEAM_ID, OWNER_TOKEN, CLIENT_ID and
// REDIRECT_URI: TestNodeMCP sets them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { Browser } from './browser.js'

const env = process.env
const { GATEHOUSE_URL: base, TEST_EMAIL: email, TEST_PASSWORD: password, ORG_ID: orgId, TEAM_ID: teamId } = env
const { OWNER_TOKEN: ownerToken, CLIENT_ID: clientIdUrl, REDIRECT_URI: redirectUri } = env
if (!base || !email || !password || !orgId || !teamId || !ownerToken || !clientIdUrl || !redirectUri) {
  throw new Error('set GATEHOUSE_URL, TEST_EMAIL, TEST_PASSWORD, ORG_ID, TEAM_ID, OWNER_TOKEN, CLIENT_ID and REDIRECT_URI (go test -run TestNodeMCP ./internal/mcp does)')
}

// Provider keeps the client's registration and tokens in memory; its
// client_id is the URL of its metadata document (clientMetadataUrl), which
// the SDK uses when the authorization server advertises
// client_id_metadata_document_supported. With
// keepRefresh false it forgets the refresh token, so the SDK's step-up
// starts a new authorization (it would otherwise refresh, which keeps the
// old scope).
class Provider {
  constructor() {
    this.keepRefresh = true
  }
  get clientMetadataUrl() {
    return clientIdUrl
  }
  get redirectUrl() {
    return redirectUri
  }
  get clientMetadata() {
    return {
      client_name: 'MCP TypeScript SDK client',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
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
    this._tokens = this.keepRefresh ? tokens : { ...tokens, refresh_token: undefined }
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

const names = (list) => list.tools.map((t) => t.name).sort()

test('MCP TypeScript SDK client: discovery, client ID metadata document, PKCE with resource, tools, step-up, a tool turned off', async (t) => {
  const mcpUrl = new URL('/mcp', base)
  const unauth = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  assert.equal(unauth.status, 401)
  const challenge = unauth.headers.get('www-authenticate')
  const named = challenge.match(/resource_metadata="([^"]*)"/)
  assert.ok(named, challenge)
  const resourceMetadataUrl = new URL(named[1])
  assert.equal(resourceMetadataUrl.pathname, '/.well-known/oauth-protected-resource/mcp')

  // Discovery as a client does it from the 401: the resource's metadata
  // names the authorization server, whose metadata says it takes client
  // ID metadata documents.
  const prm = await (await fetch(resourceMetadataUrl)).json()
  assert.equal(prm.resource, mcpUrl.href)
  assert.ok(prm.scopes_supported.includes('tasks:write'))
  const issuer = new URL(prm.authorization_servers[0])
  const asm = await (await fetch(new URL('/.well-known/oauth-authorization-server', issuer))).json()
  assert.equal(asm.client_id_metadata_document_supported, true)
  assert.ok(asm.code_challenge_methods_supported.includes('S256'))

  const browser = new Browser(base)
  await browser.signIn(email, password)
  const provider = new Provider()
  // A read-only token first. The SDK registers nothing: its client_id is
  // the document's URL, which Gatehouse fetches to show the consent page.
  assert.equal(await auth(provider, { serverUrl: mcpUrl, resourceMetadataUrl, scope: 'tasks:read' }), 'REDIRECT')
  assert.equal(provider.clientInformation().client_id, clientIdUrl)
  assert.equal(provider.authorizationUrl.searchParams.get('client_id'), clientIdUrl)
  assert.equal(provider.authorizationUrl.searchParams.get('code_challenge_method'), 'S256')
  assert.equal(provider.authorizationUrl.searchParams.get('resource'), mcpUrl.href)
  let back = await browser.approve(provider.authorizationUrl, orgId)
  assert.equal(back.searchParams.get('iss'), asm.issuer)
  assert.equal(await auth(provider, { serverUrl: mcpUrl, authorizationCode: back.searchParams.get('code') }), 'AUTHORIZED')
  assert.equal(provider.tokens().scope, 'tasks:read')

  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
  const client = new Client({ name: 'gatehouse-node-test', version: '1.0.0' })
  t.after(() => client.close())
  // Each notifications/tools/list_changed the session hears, in order.
  const heard = []
  let wake = () => {}
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    heard.push(Date.now())
    wake()
  })
  const nextChange = async (what) => {
    const deadline = Date.now() + 20000
    while (heard.length === 0) {
      if (Date.now() > deadline) throw new Error(`no notifications/tools/list_changed within 20 s of ${what}`)
      await new Promise((resolve) => {
        wake = resolve
        setTimeout(resolve, 250)
      })
    }
    heard.shift()
  }
  await client.connect(transport)
  assert.deepEqual(names(await client.listTools()), ['tasks_get_issue', 'tasks_list_issues', 'tasks_list_teams'])
  const teams = await client.callTool({ name: 'tasks_list_teams', arguments: {} })
  assert.equal(teams.structuredContent.teams[0].id, teamId)

  // A write with the read-only token: 403 insufficient_scope, and the SDK
  // asks for the scopes the challenge names.
  provider.keepRefresh = false
  provider.saveTokens(provider.tokens())
  provider.authorizationUrl = undefined
  await assert.rejects(client.callTool({ name: 'tasks_create_issue', arguments: { teamId, title: 'From Node' } }), UnauthorizedError)
  assert.ok(provider.authorizationUrl, 'the step-up asked for the browser')
  assert.deepEqual(provider.authorizationUrl.searchParams.get('scope').split(' ').sort(), ['tasks:read', 'tasks:write'])
  provider.keepRefresh = true
  back = await browser.approve(provider.authorizationUrl, orgId)
  await transport.finishAuth(back.searchParams.get('code'))

  const created = await client.callTool({ name: 'tasks_create_issue', arguments: { teamId, title: 'From Node' } })
  assert.ok(!created.isError, JSON.stringify(created))
  const id = created.structuredContent.issue.id
  const read = await client.callTool({ name: 'tasks_get_issue', arguments: { id } })
  assert.equal(read.structuredContent.issue.title, 'From Node')
  const missing = await client.callTool({ name: 'tasks_get_issue', arguments: { id: '00000000-0000-4000-8000-000000000000' } })
  assert.equal(missing.isError, true)
  assert.ok(names(await client.listTools()).includes('tasks_create_issue'))
  // The step-up's tools were added to the session: it was told (by its
  // watcher or that tools/list, whichever came first).
  await nextChange('the step-up')

  // The workspace turns Tasks off: the open session hears
  // notifications/tools/list_changed on its GET stream, and its tool list
  // shrinks with the token it has (which still lists Tasks); a call is
  // refused as the API refuses a token without the tool.
  const off = await fetch(new URL(`/v1/orgs/${orgId}/tools`, base), {
    method: 'PUT',
    headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool: 'tasks', enabled: false }),
  })
  assert.equal(off.status, 200, await off.text())
  await nextChange('turning Tasks off')
  assert.deepEqual(names(await client.listTools()), [])
  const refused = await client.callTool({ name: 'tasks_list_issues', arguments: {} })
  assert.equal(refused.isError, true)
  assert.equal(refused.content[0].text, 'the tasks tool is not enabled for this workspace')
  // The client's next token leaves it out too.
  provider.saveTokens({ ...provider.tokens(), access_token: 'expired' }) // the SDK refreshes on the 401
  assert.deepEqual(names(await client.listTools()), [])
})
