// `fastify-expand pull`: reads a database's tables and writes a module of
// `defineResource` calls (generate.ts). bin.ts runs it as the package's bin.

import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { PullError, databaseLocation, readDatabase, redacted } from './connect.js'
import { describeSkipped, generateModule } from './generate.js'
import { namings, type Naming } from './naming.js'

export const usage = `Usage: fastify-expand pull --database-url <url> [--out <file.ts>] [--naming camel|snake|keep] [--force]

  --database-url  file:path.db or a path (SQLite), postgres://… (PostgreSQL), mysql://… or mariadb://…
  --out           the module to write (default: standard output); an existing file only with --force
  --naming        field names: camel (default: artist_id is artistId), snake (ArtistId is artist_id), keep (the column's)
  --force         overwrite --out
`

/** Where the command prints. */
export interface PullIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
}

/** Runs the command line `argv` (without node and the script); resolves to the exit code: 0 done, 1 an error, printed in one line. */
export async function pull (argv: readonly string[], io: PullIo): Promise<number> {
  try {
    return await run(argv, io)
  } catch (error) {
    // A user's mistake (an option, a URL, a file that exists, a server that cannot be reached) is one line.
    const message = error instanceof PullError || (error as { code?: unknown }).code?.toString().startsWith('ERR_PARSE_ARGS')
      ? (error as Error).message
      : `unexpected error: ${(error as Error).message}`
    io.stderr(`fastify-expand pull: ${message}\n`)
    return 1
  }
}

async function run (argv: readonly string[], io: PullIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      'database-url': { type: 'string' },
      out: { type: 'string' },
      naming: { type: 'string', default: 'camel' },
      force: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) { io.stdout(usage); return 0 }
  if (positionals.length !== 1 || positionals[0] !== 'pull') throw new PullError(`expected the command pull (${usage.split('\n')[0]})`)
  const url = values['database-url']
  if (url === undefined || url === '') throw new PullError('--database-url is required: file:path.db, postgres://… or mysql://…')
  if (!(namings as readonly string[]).includes(values.naming)) {
    throw new PullError(`--naming is '${values.naming}': expected one of ${namings.join(', ')}`)
  }
  const naming = values.naming as Naming
  const location = databaseLocation(url)
  const out = values.out
  const exists = () => new PullError(`${out} exists: pass --force to overwrite it`)
  // Checked before reading the database too, so the mistake costs no connection.
  if (out !== undefined && !values.force && existsSync(out)) throw exists()
  const { text, skipped, resources } = generateModule(await readDatabase(location), { naming })
  for (const item of skipped) io.stderr(`skipped ${describeSkipped(item)}\n`)
  if (out === undefined) {
    io.stdout(text)
  } else {
    try {
      // 'wx' fails when the file exists: never overwritten without --force, even by a file made meanwhile.
      await writeFile(out, text, { flag: values.force ? 'w' : 'wx' })
    } catch (error) {
      const code = (error as { code?: unknown }).code
      throw new PullError(code === 'EEXIST' ? exists().message : `cannot write ${out}: ${(error as Error).message}`)
    }
    io.stderr(`wrote ${out}: ${resources.length} resource${resources.length === 1 ? '' : 's'} from ${redacted(url)}\n`)
  }
  return 0
}
