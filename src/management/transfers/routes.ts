import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import type { TransferJobRecord } from '../../storage/repos/transfers.js';
import { IMPORT_FORMATS } from '../../transfers/parse.js';
import { errorResponse, idOf, iso } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

const hashConfig = z.strictObject({
  signer_key: z.string().min(1).max(512).regex(B64, 'must be base64'),
  salt_separator: z.string().max(64).regex(B64, 'must be base64'),
  rounds: z.number().int().min(1).max(64),
  mem_cost: z.number().int().min(1).max(20),
});

const importBody = z
  .strictObject({
    format: z.enum(IMPORT_FORMATS),
    /** The file as text (JSONL, CSV or JSON). */
    data: z.string().min(1).optional(),
    /** The file as base64 (bytes that are not valid UTF-8 get per-row reasons). */
    data_base64: z.string().min(1).regex(B64, 'must be base64').optional(),
    dry_run: z.boolean().default(false),
    /** Firebase's project hash parameters (Authentication → Users → Password hash parameters). */
    hash_config: hashConfig.optional(),
    /** Accept the legacy salted SHA-256/512 hashes. */
    allow_legacy_sha: z.boolean().default(false),
    /** Names the system the external ids come from (default: the format; jsonl and csv share `keyhall`). */
    source: z
      .string()
      .regex(/^[a-z0-9_.-]{1,40}$/)
      .optional(),
  })
  .refine((b) => (b.data === undefined) !== (b.data_base64 === undefined), { message: 'give data or data_base64 (one of them)' });

const rejectedRow = z.object({
  row: z.number(),
  external_id: z.string().optional(),
  email: z.string().optional(),
  reason: z.string(),
  detail: z.string().optional(),
});

const jobView = z.object({
  id: z.string(),
  status: z.enum(['running', 'succeeded', 'failed']),
  format: z.string(),
  dry_run: z.boolean().optional(),
  include_secrets: z.boolean().optional(),
  counts: z.record(z.string(), z.number()),
  error: z.string().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});

const view = (j: TransferJobRecord) => ({
  id: j.id,
  status: j.status,
  format: j.format,
  ...(j.kind === 'import' ? { dry_run: j.dryRun } : { include_secrets: j.includeSecrets }),
  counts: j.counts,
  error: j.error,
  created_at: iso(j.createdAt),
  finished_at: j.finishedAt === null ? null : iso(j.finishedAt),
});

/** Imports of users (with their password hashes) and exports of the tenant as JSONL (docs/import-export.md). */
export const transfersFeature = defineFeature({
  tags: [{ name: 'imports', description: 'User imports with existing password hashes, and tenant exports to JSONL (asynchronous jobs)' }],
  routes: (r, { transfers: service }) => {
    r.post('/imports', {
      config: {
        permission: 'imports:write',
        access: 'platform',
        operation: { operationId: 'createImport', ok: 'The import job, started (poll GET /v1/imports/{importId})' },
      },
      schema: {
        summary: 'Import users from an Auth0, Firebase, Keycloak, Cognito, JSONL or CSV file (asynchronous)',
        body: importBody,
        response: { 202: jobView, 400: errorResponse },
      },
      handler: async (request, reply) => {
        const b = request.body;
        const data = b.data !== undefined ? Buffer.from(b.data, 'utf8') : Buffer.from(b.data_base64!, 'base64');
        const job = await service.startImport(tenantOf(request).id, actorOf(request), data, {
          format: b.format,
          source: b.source,
          dryRun: b.dry_run,
          allowLegacySha: b.allow_legacy_sha,
          hashConfig: b.hash_config && {
            signerKey: b.hash_config.signer_key,
            saltSeparator: b.hash_config.salt_separator,
            rounds: b.hash_config.rounds,
            memCost: b.hash_config.mem_cost,
          },
        });
        return reply.code(202).send(view(job));
      },
    });

    r.get('/imports/:importId', {
      config: { permission: 'imports:write', access: 'platform', operation: { operationId: 'getImport', ok: 'The import job: status and counts' } },
      schema: { summary: 'An import job', params: z.object({ importId: idOf('imp') }), response: { 200: jobView } },
      handler: async (request) => view(await service.get(tenantOf(request).id, 'import', request.params.importId)),
    });

    r.get('/imports/:importId/report', {
      config: {
        permission: 'imports:write',
        access: 'platform',
        operation: { operationId: 'getImportReport', ok: 'The rejected rows with their reasons (never a hash)' },
      },
      schema: {
        summary: "An import's rejected rows: row number, external id and email when known, reason code",
        params: z.object({ importId: idOf('imp') }),
        response: { 200: z.object({ id: z.string(), status: z.string(), rejected: z.array(rejectedRow) }) },
      },
      handler: async (request) => {
        const job = await service.get(tenantOf(request).id, 'import', request.params.importId);
        return { id: job.id, status: job.status, rejected: job.report };
      },
    });

    r.post('/exports', {
      config: {
        permission: 'exports:read',
        access: 'platform',
        operation: { operationId: 'createExport', ok: 'The export job, started (poll GET /v1/exports/{exportId})' },
      },
      schema: {
        summary: 'Export the tenant to JSONL (asynchronous); password hashes only with include_secrets and a key holding every permission',
        body: z.strictObject({ include_secrets: z.boolean().default(false) }),
        response: { 202: jobView, 400: errorResponse },
      },
      handler: async (request, reply) =>
        reply.code(202).send(view(await service.startExport(tenantOf(request).id, actorOf(request), request.body.include_secrets))),
    });

    r.get('/exports/:exportId', {
      config: { permission: 'exports:read', access: 'platform', operation: { operationId: 'getExport', ok: 'The export job: status and counts' } },
      schema: { summary: 'An export job', params: z.object({ exportId: idOf('exp') }), response: { 200: jobView } },
      handler: async (request) => view(await service.get(tenantOf(request).id, 'export', request.params.exportId)),
    });

    r.get('/exports/:exportId/download', {
      config: {
        permission: 'exports:read',
        access: 'platform',
        operation: { operationId: 'downloadExport', ok: 'The export as JSONL (application/x-ndjson)' },
      },
      schema: { summary: "A finished export's JSONL file", params: z.object({ exportId: idOf('exp') }) },
      handler: async (request, reply) =>
        reply
          .header('cache-control', 'no-store')
          .type('application/x-ndjson')
          .send(await service.download(tenantOf(request).id, request.params.exportId)),
    });
  },
});
