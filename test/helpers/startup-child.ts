// Registers the plugin once per startup case and prints, as JSON, how each
// registration ended: 'ready', 'rejected' (register or ready() failed), or
// 'crashed' (the error escaped as an uncaught exception, which would end a
// real server's process). Run in a child process so a crash ends nothing else.
import Fastify from 'fastify'
import expandPlugin from '../../plugin/index.js'
import { startupCases } from './startup-cases.js'

export interface StartupOutcome {
  outcome: 'ready' | 'rejected' | 'crashed' | 'thrown'
  code?: string
  message?: string
}

let onCrash: ((error: Error) => void) | undefined
process.on('uncaughtException', (error) => {
  if (onCrash === undefined) throw error
  onCrash(error)
})

const describe = (outcome: StartupOutcome['outcome'], error?: unknown): StartupOutcome => {
  if (error === undefined) return { outcome }
  const { code, message } = error as { code?: string; message?: string }
  return { outcome, code, message }
}

const results: Record<string, StartupOutcome> = {}
for (const [name, options] of Object.entries(startupCases)) {
  let pluginOptions
  try {
    pluginOptions = options()
  } catch (error) {
    results[name] = describe('thrown', error)
    continue
  }
  const crashed = new Promise<StartupOutcome>((resolve) => { onCrash = (error) => resolve(describe('crashed', error)) })
  const started = (async (): Promise<StartupOutcome> => {
    const app = Fastify()
    try {
      await app.register(expandPlugin, pluginOptions)
      await app.ready()
    } catch (error) {
      return describe('rejected', error)
    }
    await app.close()
    return describe('ready')
  })()
  results[name] = await Promise.race([started, crashed])
  onCrash = undefined
}
process.stdout.write(JSON.stringify(results))
process.exit(0)
