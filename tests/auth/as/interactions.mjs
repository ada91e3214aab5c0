// What the test authorization servers (server.mjs, upstream.mjs, shaped.mjs) share: the
// interaction route of oidc-provider (sign-in, then consent granted at once), and listening.
//
// * `interactions(provider, { account })`: GET /interaction/UID signs in the fixed `account`
//   (no person, no page): server.mjs's browserless login.
// * `interactions(provider, { form: true, before })`: GET /interaction/UID shows a login form
//   (input#login, button#signin) when the user has no session; POST signs in the account typed.
//   `before(ctx)` may answer a request first (shaped.mjs's user endpoints) and returns true then.
// * Consent grants exactly what was asked (OIDC scopes and claims, resource scopes) and is
//   remembered (a Grant): a second authorization request in the same browser comes straight back.
// * `listen(provider, config)`: on 127.0.0.1:config.port, prints "ready ISSUER"; SIGTERM and
//   SIGINT close every connection (close() alone waits for a client's idle keep-alive one).

const page = (uid) => `<!doctype html><meta charset=utf-8><title>Upstream sign-in</title>
<h1>Upstream sign-in</h1><form method=post action="/interaction/${uid}">
<label>User <input id=login name=login autocomplete=off></label> <button id=signin type=submit>Sign in</button></form>`;

async function readForm(req) {
  let body = '';
  for await (const chunk of req) { body += chunk; if (body.length > 4096) break; }
  return new URLSearchParams(body);
}

async function consent(provider, details) {
  const { params, session } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  return { consent: { grantId: await grant.save() } };
}

export function interactions(provider, { account, form = false, before } = {}) {
  provider.use(async (ctx, next) => {
    if (before && await before(ctx)) return undefined;
    if (!/^\/interaction\/[^/]+$/.test(ctx.path) || (!form && ctx.method !== 'GET')) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const { prompt } = details;
    let result;
    if (prompt.name === 'login' && !form) {
      result = { login: { accountId: account } };
    } else if (prompt.name === 'login') {
      if (ctx.method === 'GET') {
        ctx.type = 'html';
        ctx.body = page(details.uid);
        return undefined;
      }
      const login = (await readForm(ctx.req)).get('login');
      result = login ? { login: { accountId: login } } : { error: 'access_denied' };
    } else if (prompt.name === 'consent') {
      result = await consent(provider, details);
    } else {
      result = { error: 'access_denied', error_description: `unexpected prompt ${prompt.name}` };
    }
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.status = 303;
    ctx.redirect(returnTo);
    return undefined;
  });
}

export function listen(provider, config) {
  const server = provider.listen(config.port, '127.0.0.1', () => {
    process.stdout.write(`ready ${config.issuer}\n`);
  });
  const stop = () => { server.close(() => process.exit(0)); server.closeAllConnections(); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
