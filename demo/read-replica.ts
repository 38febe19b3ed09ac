import type { FastifyInstance, FastifyRequest } from 'fastify'
import { sql, type Kysely } from 'kysely'

/*
 * Reads on a PostgreSQL hot standby, through the plugin's per-request `db`
 * (docs/beyond-one-machine.md, Read replicas):
 *   - a request that writes (any method but GET and HEAD) reads from the primary;
 *   - a write answers the WAL position it ended at (`writtenPosition`, sent to
 *     the client as it likes: a header, a cookie); a GET that carries it back
 *     in `x-written-lsn` reads from the standby once the standby has replayed
 *     that position, from the primary before (and when the standby cannot be
 *     asked, or the header is not a position);
 *   - every other GET reads from the standby, whose rows may be older than the
 *     primary's by its replication lag.
 * test/demo/read-replica.test.ts checks each case against a real standby.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The database this request's statements run on: the standby, or the primary. */
    readsFrom: Kysely<any> | undefined
  }
}

/** The header a read carries the position of the client's own last write in. */
export const writtenPositionHeader = 'x-written-lsn'

/** PostgreSQL's text form of a WAL position (`pg_lsn`): two hexadecimal numbers of 32 bits. */
const positionForm = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i

/** Where a request reads from, as `routeReads` decides it. */
export type ReadSource = 'primary' | 'replica'

/**
 * The WAL position the primary has written up to: the end of the last record
 * it inserted, past the commit of every statement that returned before it was
 * asked (with `synchronous_commit = off` too, whose commit record is inserted
 * before the statement returns). See `endOfLastRecord` for why that is not
 * `pg_current_wal_insert_lsn()` itself.
 */
export async function writtenPosition (primary: Kysely<any>): Promise<string> {
  const { rows } = await sql.raw<InsertPosition>(insertPositionStatement).execute(primary)
  return positionWritten(rows[0]!)
}

/** What `insertPositionStatement` answers: the insert position and the sizes `endOfLastRecord` needs. */
export interface InsertPosition { lsn: string, page: number, segment: string }

/** The statement `writtenPosition` runs, for a caller with a client of its own (the scale-out drill's pg pool). */
export const insertPositionStatement = "select pg_current_wal_insert_lsn()::text as lsn, current_setting('wal_block_size')::int as page, " +
  "(select setting from pg_settings where name = 'wal_segment_size') as segment"

/** The position written up to, from `insertPositionStatement`'s row. */
export function positionWritten ({ lsn, page, segment }: InsertPosition): string {
  return endOfLastRecord(lsn, page, BigInt(segment))
}

/** The sizes of a WAL page's header: a segment's first page has the long one (64-bit builds). */
const shortPageHeader = 24n
const longPageHeader = 40n

/**
 * `pg_current_wal_insert_lsn()` is where the next record goes. When the last
 * record ended at a page's end, that is past the next page's header, where no
 * record ends; a standby's `pg_last_wal_replay_lsn()` (the end of the last
 * record it replayed) stops at the page's end and reaches the position only
 * once more WAL is written, up to 15 s later on an idle primary. The header is
 * taken off, so the position is the page's end.
 */
export function endOfLastRecord (insertPosition: string, pageSize: number, segmentSize: bigint): string {
  const [high, low] = insertPosition.split('/')
  const at = (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`)
  const header = at % segmentSize === longPageHeader
    ? longPageHeader
    : at % BigInt(pageSize) === shortPageHeader ? shortPageHeader : 0n
  const end = at - header
  return `${(end >> 32n).toString(16).toUpperCase()}/${(end & 0xFFFFFFFFn).toString(16).toUpperCase()}`
}

/** Whether the standby has replayed `position`; false when it cannot be asked. */
export async function hasReplayed (replica: Kysely<any>, position: string): Promise<boolean> {
  try {
    const { rows } = await sql<{ replayed: boolean | null }>`select pg_last_wal_replay_lsn() >= ${position}::pg_lsn as replayed`.execute(replica)
    return rows[0].replayed === true
  } catch {
    return false
  }
}

/** Where a request reads from: see the comment at the top. */
export async function readSourceOf (request: FastifyRequest, replica: Kysely<any>): Promise<ReadSource> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return 'primary'
  const written = request.headers[writtenPositionHeader]
  if (written === undefined) return 'replica'
  if (typeof written !== 'string' || !positionForm.test(written)) return 'primary'
  return await hasReplayed(replica, written) ? 'replica' : 'primary'
}

/**
 * Decides each request's database in an `onRequest` hook of `app` and returns
 * the plugin's `db` option that answers it; handlers write through
 * `request.readsFrom` too (the primary, for a request that writes).
 */
export function routeReads<DB> (
  app: FastifyInstance,
  { primary, replica }: { primary: Kysely<DB>, replica: Kysely<DB> }
): (request: FastifyRequest) => Kysely<DB> {
  app.decorateRequest('readsFrom')
  app.addHook('onRequest', async (request) => {
    request.readsFrom = await readSourceOf(request, replica) === 'replica' ? replica : primary
  })
  return (request) => {
    // routeReads adds its hook to the instance it is given: a route outside it has no database chosen.
    if (request.readsFrom === undefined) throw new Error('no database chosen for this request')
    return request.readsFrom as Kysely<DB>
  }
}
