// Installs the benchmarks' contenders (benchmarks/contenders/package.json, its
// own lockfile) when they are missing or not the locked versions: `npm run
// bench` runs this first. Apart from the repository's dependencies because
// drizzle-orm's optional peers (its React Native drivers among them) do not
// resolve beside them; --legacy-peer-deps installs none of its peers, so its
// drivers import the repository's better-sqlite3 and pg.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const folder = path.dirname(fileURLToPath(import.meta.url))
const lock = JSON.parse(readFileSync(path.join(folder, 'package-lock.json'), 'utf8'))
const installed = (name) => {
  const file = path.join(folder, 'node_modules', name, 'package.json')
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : undefined
}
const stale = Object.entries(lock.packages)
  .filter(([key]) => key.startsWith('node_modules/'))
  .filter(([key, entry]) => installed(key.slice('node_modules/'.length)) !== entry.version)
if (stale.length > 0) {
  console.log(`Installing the benchmarks' contenders in ${path.relative(process.cwd(), folder) || '.'}`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const result = spawnSync(npm, ['ci', '--legacy-peer-deps', '--no-audit', '--no-fund'], { cwd: folder, stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
