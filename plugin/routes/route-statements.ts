import { DatabaseError } from '../errors.js'
import type { LoadContext } from '../load/load-context.js'
import { databaseFailureKind } from '../sql/dialects/index.js'
import { loadChannel, tokenOf, type StatementLabel } from '../trace/channels.js'

/**
 * A lookup by a value its column cannot hold (an int4 key asked for
 * 2147483648, a uuid key asked for 'abc': the dialect's 'unstorable value')
 * finds no row, as a database that stores any value in any column simply
 * finds none: both answer 404.
 */
export function isUnstorableValue (error: unknown): boolean {
  return error instanceof DatabaseError && databaseFailureKind(error.cause) === 'unstorable value'
}

/** What the load channel publishes of a generated route's own statement (its page, count or row), while it has subscribers. */
export function rootStatement (context: LoadContext, kind: 'page' | 'count' | 'one'): StatementLabel | undefined {
  if (!loadChannel.hasSubscribers) return undefined
  return { kind, path: '', system: context.dialect.systemName, wave: 0, keyCount: undefined, request: tokenOf(context) }
}
