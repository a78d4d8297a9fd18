/**
 * The /v1 operations' documentation and the document's tags, gathered from the management
 * features: each route declares its own in `config.operation` (see ../feature.ts).
 */
import type { OperationDoc } from '../feature.js';
import { MANAGEMENT_FEATURES } from '../features.js';

/** Keyed by `METHOD /v1/path`, with path parameters as in the document (`{orgId}`). */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = Object.fromEntries(MANAGEMENT_FEATURES.flatMap((f) => Object.entries(f.operations)));

/** Tags in the order a reader meets them, with what each groups. */
export const TAGS: readonly { name: string; description: string }[] = MANAGEMENT_FEATURES.flatMap((f) => f.tags);
