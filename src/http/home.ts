/**
 * What a person opening a tenant's host in a browser finds: a page at / with where to go next
 * (the console, discovery, the API reference) instead of a bare 404, and the favicon (an SVG,
 * and /favicon.ico for browsers that ask for it by default). docs/api.md, "The home page".
 */
import type { FastifyInstance } from 'fastify';
import { homePage } from '../screens/home.js';
import { OPENAPI_DOCUMENTS } from './openapi-documents.js';
import { sendPage } from './screens/csp.js';
import { tenantOf } from './tenant.js';

/** The key on Keyhall's blue (console/ uses the same colour). */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b57d0"/><circle cx="12" cy="12" r="5.5" fill="none" stroke="#fff" stroke-width="3"/><path d="M16 16l9 9m-4.5-4.5l3-3m-0.5 5.5l3-3" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>';

/** The same key, 32×32, as an ICO holding one PNG image (rendered from FAVICON_SVG). */
const FAVICON_ICO = Buffer.from(
  'AAABAAEAICAAAAEAIAC2AwAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAA2tJREFUeJzEl1lME0EYx/+zrdUuavHCKMYbj8QDDSK++IIGMWggMZJg5IpR1GiiIBqffBOJSGLEYMAgvojxAqIiweNBH9AoVDxDDIdyCIJy2UKhjDMLXQrsYqlt/SWb/WZnZr//fvPNtxkt7Akv9xYnkmPMCiIU/iDwgSugaKYERmaVmnpoOvLXtdm6iM0QIytCAWs2AZkLN0JBGwDNPtPNNUWyAK/dxhBmPYIHoRC2cxEEURXTxD7rB0LIHHgQHglTv261Vm+1xnjaOYcvtV6wRGsFkKCxBhpEDY6GzULAUhGrF+ilZ+9qzXhZacLF+83o6u6Hs3DfRIwsr2FqFigN2Oo/BVcOzoePQav4gsZfvdif8RXP3nfBGdgy1BKvSCNV6gxeMwUFpxfDESJSqlBi7IQzKArw9tLgTdoKzPYe+PIHrzuQXtiMT3XdUnvlvElICvfBtvVTpTaPxPrjn9FpHv9yCEoP92yeLjsvKutA5PlqlFb+RrvJKl3c3pVajeLyDmnMnGkTEMXmOIOigMBlomyn3m1SnZxyZ6gvaLkXnEExuzYuG3rZx2/dqpO/NPbI9iYnBShGQKclivZYTNA4Ns4hAW+rzbLtN3ei6mT7vvIqE1wmgBcaGyciZqtOTo31le0Kuzn/LCD7cSs6BrdUKNtqt5MXsbwQMVUvYPpkjWS/OOuHgCUDydrTS3GVzXEG1UK0Y4MBNxIXwlEuPfyBU9cb5HYyi1z8lhlIy29CVknr+AVw/laKzZZ+6HVDQcwoasHJ3HqkxvjiUOjMwTEUs6Ir1FxAo1uVcEats+q7Bdee/kSflcLSxyokCz+vdrwQ5T1vw970WkyeJEg/Kk6gn4iwAAPCWPRsnGN1hO+QhT461DRbMK4IOEpanC8OhMwc9ZxHhG9OWzSiLtSg8FX7sDFauIDEnHrpbi9ipHM1XCJAScThEY55ko78eo4AF8JF5DwZnfGZxS3Ddog9LouAjSNZddI9LniG7DxpMDpKuDQC9iIusxzgJLAl6cpbi52BBlUBTXADybnDl0PlV9WkpRRGQhACN8AjUVY18I8oUEhA7lvLioCRqXOLAI5SUsoCmG+BCjSTWW3wNMwn9y10562r6aeIh4ehRIjlvqVdYL7lf4+f1QYOjm52zHwMngsLeHt4cv6H4/kfAAAA///vBYA2AAAABklEQVQDAEhrTdKBSr3NAAAAAElFTkSuQmCC',
  'base64',
);

/** The icons never change within a release: browsers keep them a week. */
const ICON_CACHE = 'public, max-age=604800';

export async function homeRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', async (request, reply) => {
    const tenant = tenantOf(request);
    return sendPage(reply, 200, { title: 'title.home' }, (f) => homePage(f, { issuer: tenant.issuer, documents: OPENAPI_DOCUMENTS.map((d) => d.path) }));
  });
  // Icons answer on any host, a tenant's or not (a browser asks for them on an error page too).
  app.get('/favicon.svg', { config: { tenantless: true } }, async (_request, reply) =>
    reply.type('image/svg+xml').header('cache-control', ICON_CACHE).send(FAVICON_SVG),
  );
  app.get('/favicon.ico', { config: { tenantless: true } }, async (_request, reply) =>
    reply.type('image/x-icon').header('cache-control', ICON_CACHE).send(FAVICON_ICO),
  );
}
