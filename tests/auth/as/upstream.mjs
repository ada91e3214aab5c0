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

const page = (uid) => `<!doctype html><meta charset=utf-8><title>Upstream sign-in</title>
<h1>Upstream sign-in</h1><form method=post action="/interaction/${uid}">
<label>User <input id=login name=login autocomplete=off></label> <button id=signin type=submit>Sign in</button></form>`;

async function readForm(req) {
  let body = '';
  for await (const chunk of req) { body += chunk; if (body.length > 4096) break; }
  return new URLSearchParams(body);
}

provider.use(async (ctx, next) => {
  const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
  if (!match) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    if (ctx.method === 'GET') {
      ctx.type = 'html';
      ctx.body = page(details.uid);
      return undefined;
    }
    const form = await readForm(ctx.req);
    const login = form.get('login');
    result = login ? { login: { accountId: login } } : { error: 'access_denied' };
  } else if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    result = { error: 'access_denied', error_description: `unexpected prompt ${prompt.name}` };
  }
  const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
  ctx.status = 303;
  ctx.redirect(returnTo);
  return undefined;
});

const server = provider.listen(config.port, '127.0.0.1', () => {
  process.stdout.write(`ready ${config.issuer}\n`);
});
const stop = () => { server.close(() => process.exit(0)); server.closeAllConnections(); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
