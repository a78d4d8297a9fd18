import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { toAppError } from '../../src/http/errors.js';
import { errors } from '../../src/kernel/errors.js';

/** A request whose log records what the renderer writes. */
function recordingRequest() {
  const lines: Array<{ level: string; obj: Record<string, unknown> }> = [];
  const log = Object.fromEntries(['info', 'error', 'warn', 'debug'].map((level) => [level, (obj: Record<string, unknown>) => lines.push({ level, obj })]));
  return { request: { log } as unknown as FastifyRequest, lines };
}

describe('AppError cause and log-only detail', () => {
  it('logs the cause and detail and never puts them in the body', () => {
    const { request, lines } = recordingRequest();
    const cause = new Error('connect ECONNREFUSED 10.0.0.7:443');
    const e = toAppError(errors.invalidRequest('the upstream could not be reached').because(cause, 'upstream https://10.0.0.7/jwks refused'), request);
    assert.deepEqual(e.toBody(), { error: 'invalid_request', error_description: 'the upstream could not be reached' });
    assert.ok(!JSON.stringify(e.toBody()).includes('10.0.0.7'));
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.level, 'info');
    assert.equal(lines[0]!.obj.detail, 'upstream https://10.0.0.7/jwks refused');
    assert.equal(lines[0]!.obj.err, cause);
    assert.equal(e.cause, cause);
    // The cause is not an own enumerable property: serialising the error does not leak it.
    assert.ok(!Object.keys(e).includes('cause'));
  });

  it('logs nothing for a plain client error, and an unknown error becomes server_error', () => {
    const { request, lines } = recordingRequest();
    assert.equal(toAppError(errors.notFound('x'), request).status, 404);
    assert.equal(lines.length, 0);
    const e = toAppError(new TypeError('secret internals'), request);
    assert.deepEqual(e.toBody(), { error: 'server_error' });
    assert.equal(lines[0]!.level, 'error');
  });
});
