// `fastify-expand pull`: reads a database's tables and writes a module of
// `defineResource` calls (generate.ts). bin.ts runs it as the package's bin.

import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { databaseLocation, isMistake, mistake, readDatabase, redacted, type Mistake } from './connect.js'
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
  let outcome: 'done' | Mistake
  try {
    outcome = await run(argv, io)
  } catch (error) {
    // Not the user's mistake: still one line.
    outcome = mistake(`unexpected error: ${(error as Error).message}`)
  }
  if (outcome === 'done') return 0
  // A user's mistake (an option, a URL, a file that exists, a server that cannot be reached) is one line.
  io.stderr(`fastify-expand pull: ${outcome.message}\n`)
  return 1
}

async function run (argv: readonly string[], io: PullIo): Promise<'done' | Mistake> {
  const parsed = parseOptions(argv)
  if (isMistake(parsed)) return parsed
  const { values, positionals } = parsed
  if (values.help) { io.stdout(usage); return 'done' }
  if (positionals.length !== 1 || positionals[0] !== 'pull') return mistake(`expected the command pull (${usage.split('\n')[0]})`)
  const url = values['database-url']
  if (url === undefined || url === '') return mistake('--database-url is required: file:path.db, postgres://… or mysql://…')
  if (!(namings as readonly string[]).includes(values.naming)) {
    return mistake(`--naming is '${values.naming}': expected one of ${namings.join(', ')}`)
  }
  const naming = values.naming as Naming
  const location = databaseLocation(url)
  if (isMistake(location)) return location
  const out = values.out
  const exists = mistake(`${out} exists: pass --force to overwrite it`)
  // Checked before reading the database too, so the mistake costs no connection.
  if (out !== undefined && !values.force && existsSync(out)) return exists
  const model = await readDatabase(location)
  if (isMistake(model)) return model
  const { text, skipped, resources } = generateModule(model, { naming })
  for (const item of skipped) io.stderr(`skipped ${describeSkipped(item)}\n`)
  if (out === undefined) {
    io.stdout(text)
  } else {
    try {
      // 'wx' fails when the file exists: never overwritten without --force, even by a file made meanwhile.
      await writeFile(out, text, { flag: values.force ? 'w' : 'wx' })
    } catch (error) {
      return (error as { code?: unknown }).code === 'EEXIST' ? exists : mistake(`cannot write ${out}: ${(error as Error).message}`)
    }
    io.stderr(`wrote ${out}: ${resources.length} resource${resources.length === 1 ? '' : 's'} from ${redacted(url)}\n`)
  }
  return 'done'
}

/** The options, or node:util's message for a command line it does not read (an unknown option, a missing value). */
function parseOptions (argv: readonly string[]) {
  try {
    return parseArgs({
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
  } catch (error) {
    if (!String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')) throw error
    return mistake((error as Error).message)
  }
}
