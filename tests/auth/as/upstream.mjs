// An upstream identity provider for the OAuth proxy tests (tests/auth/proxy/): oidc-provider
// with no dynamic registration, one pre-registered confidential client (the proxy's), the
// authorization code grant with PKCE, and a login form a browser fills in.
//
//   node upstream.mjs CONFIG.json
//
// CONFIG.json: {"issuer": "http://127.0.0.1:PORT", "port": PORT, "keys": [private JWKs],
// "client": {"client_id", "client_secret", "redirect_uri"}, "resource": URL,
// "format": "jwt" | "opaque"}.
//
// * The access tokens are for `resource` (RFC 8707, also the default resource): JWTs
//   (RFC 9068, ES256) with "jwt", opaque with "opaque" (introspection, RFC 7662, is on
//   for the client).
// * GET /interaction/UID shows a login form (input#login, button#signin) when the user has
//   no session; POST /interaction/UID signs in the account typed. The consent to the client
//   is given at once and remembered (a Grant), so a second authorization request in the same
//   browser comes straight back to the client with a code: what the proxy's own consent
//   must not let another MCP client ride on (security_best_practices.mdx, confused deputy).
// Prints "ready ISSUER" once listening.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

import { interactions, listen } from './interactions.mjs';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const client = config.client;

const provider = new Provider(config.issuer, {
  jwks: { keys: config.keys },
  cookies: { keys: ['an-upstream-cookie-signing-key'] },
  clients: [{
    client_id: client.client_id,
    client_secret: client.client_secret,
    grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: [client.redirect_uri],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'ES256',
  }],
  pkce: { required: () => true },
  scopes: ['openid', 'offline_access', 'notes'],
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  issueRefreshToken: (ctx, c) => c.grantTypeAllowed('refresh_token'),
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: false },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => config.resource,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'notes',
        audience: config.resource,
        accessTokenTTL: 300,
        accessTokenFormat: config.format === 'opaque' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
provider.proxy = false;

interactions(provider, { form: true });
listen(provider, config);
