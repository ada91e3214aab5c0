// A real authorization server for tests/auth/server: oidc-provider (a certified OpenID
// provider) issuing RFC 9068 JWT access tokens through the client_credentials grant.
//
//   node server.mjs CONFIG.json
//
// CONFIG.json: {"issuer": "http://127.0.0.1:PORT", "port": PORT, "keys": [private JWKs],
// "alg": "ES256" | "RS256", "clients": [{"client_id", "client_secret", "scope", "ttl"?}]}.
// Every resource indicator is a resource server whose tokens are JWTs (opaque when its path
// contains "opaque") with `aud` = the indicator, scopes "mcp admin", signed with the first key of `alg`; a client's `ttl`
// (seconds) sets the lifetime of its tokens. Prints "ready ISSUER" once listening.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ttlByClient = new Map(config.clients.map((c) => [c.client_id, c.ttl ?? 300]));

const provider = new Provider(config.issuer, {
  jwks: { keys: config.keys },
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
  scopes: ['mcp', 'admin'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator, client) => ({
        scope: 'mcp admin',
        audience: resourceIndicator,
        accessTokenTTL: ttlByClient.get(client.clientId) ?? 300,
        // opaque tokens (introspection only) for resources whose path mentions "opaque"
        accessTokenFormat: new URL(resourceIndicator).pathname.includes('opaque') ? 'opaque' : 'jwt',
        jwt: { sign: { alg: config.alg ?? 'ES256' } },
      }),
    },
  },
});
provider.proxy = false;

const server = provider.listen(config.port, '127.0.0.1', () => {
  process.stdout.write(`ready ${config.issuer}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
