import { readdirSync, readFileSync } from 'node:fs'

/**
 * PostgreSQL's CPU so far, in ms: the user and system ticks (10 ms each) of
 * every process named postgres on this machine (Linux's /proc), for the
 * investigations that weigh what the server spends on a statement.
 */
export function postgresCpuMs (): number {
  let ticks = 0
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.includes('(postgres)')) continue
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {}
  }
  return ticks * 10
}
