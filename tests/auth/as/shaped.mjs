// Upstream providers shaped like GitHub, Google, Entra ID, Auth0, Okta, Keycloak, WorkOS and a
// generic OIDC one, for the provider preset tests (tests/auth/proxy/test_presets.py): one
// oidc-provider process, one pre-registered confidential client per shape (its client_id is the
// shape's name), each client's tokens and claims shaped like that provider's.
//
//   node shaped.mjs CONFIG.json
//
// CONFIG.json: {"issuer", "port", "keys": [private JWKs], "resource": URL,
// "clients": [{"client_id", "client_secret", "redirect_uri", "more_redirect_uris"?}]}.
//
// * github, google: opaque access tokens; GET /user answers GitHub's shape (numeric `id`,
//   `login`, `email`), GET /v1/userinfo Google's (`sub`, `email`, `hd`) for a live token,
//   401 otherwise. The github and workos clients authenticate with client_secret_post, as GitHub and WorkOS want.
// * the others: JWT access tokens (for `resource`) and ID tokens carrying the provider's
//   claims: Entra `oid` (not the `sub`), `roles`, `groups`, `preferred_username`; Okta
//   `groups`; Keycloak `realm_access.roles`; Auth0 a namespaced roles claim in the ID token and
//   `permissions` in the access token; WorkOS `role`, `roles`, `permissions` in the access token;
//   generic OIDC `roles`.
// * GET /interaction/UID: a login form (input#login, button#signin); consent is given at once.
// Prints "ready ISSUER" once listening.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

import { interactions, listen } from './interactions.mjs';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const OPAQUE = ['github', 'google'];
const AUTH0_ROLES = 'https://mcp.example.com/roles';

// alice administers the notes, bob reads them, carol has no role at all.
const PEOPLE = {
  alice: { number: 1001, roles: ['notes-admin'] },
  bob: { number: 1002, roles: ['notes-reader'] },
  carol: { number: 1003, roles: [] },
};
const person = (id) => PEOPLE[id] ?? { number: 9999, roles: [] };
const email = (id) => `${id}@example.com`;

// The claims each shape puts in its ID token (and userinfo).
function idClaims(shape, id) {
  const { roles } = person(id);
  const base = { sub: id, email: email(id), email_verified: true };
  switch (shape) {
    case 'entra': return { ...base, oid: `oid-${id}`, tid: 'tenant-1', preferred_username: email(id), roles, groups: [`group-${id}`] };
    case 'okta': return { ...base, groups: roles };
    case 'keycloak': return { ...base, realm_access: { roles: [...roles, 'offline_access'] } };
    case 'auth0': return { ...base, [AUTH0_ROLES]: roles };
    case 'oidc': return { ...base, roles };
    default: return base;
  }
}

// What the shapes add to their JWT access tokens.
function accessClaims(shape, id) {
  const { roles } = person(id);
  if (shape === 'auth0') return { permissions: roles.map((r) => `perm:${r}`) };
  if (shape === 'workos') return { role: roles[0] ?? 'member', roles, permissions: roles.map((r) => `perm:${r}`), org_id: 'org_1' };
  return {};
}

const CUSTOM = ['oid', 'tid', 'preferred_username', 'roles', 'groups', 'realm_access', AUTH0_ROLES];
const provider = new Provider(config.issuer, {
  jwks: { keys: config.keys },
  cookies: { keys: ['a-shaped-upstream-cookie-key'] },
  clients: config.clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: [c.redirect_uri, ...(c.more_redirect_uris ?? [])],
    response_types: ['code'],
    token_endpoint_auth_method: ['github', 'workos'].includes(c.client_id) ? 'client_secret_post' : 'client_secret_basic',
    id_token_signed_response_alg: 'ES256',
  })),
  pkce: { required: () => true },
  scopes: ['openid', 'offline_access', 'email', 'profile', 'read:user', 'user:email'],
  claims: { openid: ['sub', ...CUSTOM], email: ['email', 'email_verified'], profile: ['name'] },
  conformIdTokenClaims: false,
  findAccount: (ctx, sub) => ({
    accountId: sub,
    claims: () => idClaims(ctx.oidc?.client?.clientId, sub),
  }),
  extraTokenClaims: (ctx, token) => (token.kind === 'AccessToken' && token.accountId
    ? accessClaims(token.clientId, token.accountId) : undefined),
  issueRefreshToken: (ctx, c) => c.grantTypeAllowed('refresh_token'),
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: false },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => config.resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator, client) => ({
        scope: 'read:user user:email',
        audience: config.resource,
        accessTokenTTL: 300,
        accessTokenFormat: OPAQUE.includes(client.clientId) ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
provider.proxy = false;

// The user endpoints of the opaque-token shapes.
async function userEndpoint(ctx) {
  const auth = ctx.get('authorization');
  const token = auth.startsWith('Bearer ') ? await provider.AccessToken.find(auth.slice(7)) : undefined;
  if (!token || token.isExpired) {
    ctx.status = 401;
    ctx.body = { message: 'Bad credentials' };
    return;
  }
  const id = token.accountId;
  ctx.body = ctx.path === '/user'
    ? { login: id, id: person(id).number, email: email(id), name: id.toUpperCase(), type: 'User' }
    : { sub: `google-${person(id).number}`, email: email(id), email_verified: true, hd: 'example.com' };
}

interactions(provider, {
  form: true,
  before: async (ctx) => {
    if (ctx.method !== 'GET' || (ctx.path !== '/user' && ctx.path !== '/v1/userinfo')) return false;
    await userEndpoint(ctx);
    return true;
  },
});
listen(provider, config);
