import type { AnyKysely } from './selection.js'

/** What the plugin reads of a Kysely instance's executor: its plugins, and its adapter (which tells the database). */
export interface ExecutorInternals {
  readonly plugins?: unknown
  readonly adapter?: unknown
}

/**
 * A Kysely instance's executor, or undefined when this Kysely does not
 * expose it: `getExecutor()` and the executor's `plugins` and `adapter` are
 * Kysely internals (public in its types, absent from its documentation), so
 * a Kysely release may change them.
 */
export function executorOf (db: AnyKysely): ExecutorInternals | undefined {
  const getExecutor = (db as { getExecutor?: unknown }).getExecutor
  if (typeof getExecutor !== 'function') return undefined
  try {
    return (getExecutor.call(db) as ExecutorInternals | null | undefined) ?? undefined
  } catch {
    return undefined
  }
}
