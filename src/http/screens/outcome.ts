/** What a hosted page answers when it does not render a form: an error page or a redirect. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Outcome } from '../../oauth/authorize/engine.js';
import { errorPage } from '../../screens/pages.js';
import { logProtocolRefusal, toAppError } from '../errors.js';
import { sendPage } from './csp.js';

/** Renders any error as an HTML page with its status and code (the JSON renderer's HTML twin). */
export function sendErrorPage(request: FastifyRequest, reply: FastifyReply, err: unknown): Promise<FastifyReply> {
  const e = toAppError(err, request);
  logProtocolRefusal(request, e.status, e.code);
  for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
  return sendPage(reply, e.status, { title: 'title.error' }, (f) => errorPage(f, e.code, e.description));
}

export const seeOther = (reply: FastifyReply, location: string) => reply.code(303).header('location', location).send();

/** Sends an authorization outcome: 303 to the client, the login or consent page, or an error page. */
export async function sendOutcome(request: FastifyRequest, reply: FastifyReply, outcome: Outcome): Promise<FastifyReply> {
  switch (outcome.kind) {
    case 'redirect':
      return seeOther(reply, outcome.location);
    case 'login':
      return seeOther(reply, `/login?flow=${encodeURIComponent(outcome.flow)}`);
    case 'consent':
      return seeOther(reply, `/login/consent?flow=${encodeURIComponent(outcome.flow)}`);
    case 'error':
      logProtocolRefusal(request, 400, outcome.error);
      return sendPage(reply, 400, { title: 'title.error' }, (f) => errorPage(f, outcome.error, outcome.description));
  }
}
