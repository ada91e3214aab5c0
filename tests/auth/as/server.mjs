// A real authorization server for tests/auth: oidc-provider (a certified OpenID provider)
// issuing RFC 9068 JWT access tokens for resource indicators (RFC 8707).
//
//   node server.mjs CONFIG.json
//
// CONFIG.json: {"issuer": "http://127.0.0.1:PORT", "port": PORT, "keys": [private JWKs],
// "alg": "ES256" | "RS256", "clients": [{"client_id", "client_secret", "scope", "ttl"?}],
// "account"?: "alice", "dynamic_ttl"?: seconds}.
//
// * Pre-registered `clients` use the client_credentials grant; a client's `ttl` (seconds)
//   sets the lifetime of its tokens.
// * Dynamic client registration (RFC 7591) is open; registered clients use the authorization
//   code grant with PKCE and get refresh tokens; their access tokens live `dynamic_ttl`
//   seconds (300 by default).
// * Token revocation (RFC 7009) at /token/revocation and introspection (RFC 7662) are on.
// * `dpop_nonce`: true gives DPoP server nonces (RFC 9449 section 8): a `DPoP-Nonce` on every
//   answer to a proof that lacked the current one, success included; a nonce is then required
//   for the refresh_token grant only. GET /test/stats counts the `use_dpop_nonce` refusals.
// * Logging in needs no person: the interaction URL (/interaction/UID) signs in the fixed
//   account `account` ("alice") and grants exactly the scopes the request asked for, then
//   redirects back to the authorization endpoint, so a user agent that follows redirects
//   and keeps cookies ends on the client's redirect URI with a code.
// * Every resource indicator is a resource server whose tokens are JWTs (opaque when its
//   path contains "opaque") with `aud` = the indicator, scopes "mcp admin", signed with the
//   first key of `alg`.
// Prints "ready ISSUER" once listening.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

import { interactions, listen } from './interactions.mjs';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ttlByClient = new Map(config.clients.map((c) => [c.client_id, c.ttl ?? 300]));
const account = config.account ?? 'alice';

const provider = new Provider(config.issuer, {
  jwks: { keys: config.keys },
  cookies: { keys: ['a-test-cookie-signing-key'] },
  clients: config.clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: c.scope,
    id_token_signed_response_alg: config.alg ?? 'ES256',
  })),
  clientDefaults: { id_token_signed_response_alg: config.alg ?? 'ES256' },
  scopes: ['openid', 'offline_access', 'mcp', 'admin'],
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { RefreshToken: 3600 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    dPoP: config.dpop_nonce
      ? {
          enabled: true,
          nonceSecret: Buffer.alloc(32, 7),
          requireNonce: (ctx) => ctx.oidc?.params?.grant_type === 'refresh_token',
        }
      : { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator, client) => ({
        scope: 'mcp admin',
        audience: resourceIndicator,
        accessTokenTTL: ttlByClient.get(client.clientId) ?? config.dynamic_ttl ?? 300,
        // opaque tokens (introspection only) for resources whose path mentions "opaque"
        accessTokenFormat: new URL(resourceIndicator).pathname.includes('opaque') ? 'opaque' : 'jwt',
        jwt: { sign: { alg: config.alg ?? 'ES256' } },
      }),
    },
  },
});
provider.proxy = false;

// What the tests read back: how many times a DPoP proof was refused for its nonce.
const stats = { use_dpop_nonce: 0 };
provider.on('grant.error', (ctx, error) => {
  if (error.error === 'use_dpop_nonce') stats.use_dpop_nonce += 1;
});
provider.use(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/test/stats') {
    ctx.body = stats;
    return undefined;
  }
  return next();
});

// The browserless login: sign in `account`, grant what was asked, go back to the flow.
interactions(provider, { account });
listen(provider, config);
