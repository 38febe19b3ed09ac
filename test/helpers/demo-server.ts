import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const repository = fileURLToPath(new URL('../..', import.meta.url))

export interface DemoServer {
  process: ChildProcess
  /** The base URL the server printed once it listened. */
  base: string
  /** Everything it wrote so far, stdout and stderr. */
  output(): string
  /** Its exit code, once it exits. */
  exited: Promise<number | null>
}

/**
 * Starts demo/server.ts as `npm start` does, in a child process with `env`
 * (DATABASE_URL and REPLICA_URL removed: SQLite), and resolves once it prints its URL.
 */
export async function startDemoServer (env: NodeJS.ProcessEnv, command: 'tsx' | 'node' = 'tsx'): Promise<DemoServer> {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env }
  delete environment.DATABASE_URL
  delete environment.REPLICA_URL
  const script = join(repository, 'demo/server.ts')
  const child = command === 'tsx'
    ? spawn(join(repository, 'node_modules/.bin/tsx'), [script], { cwd: repository, env: environment, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, ['--import', 'tsx', script], { cwd: repository, env: environment, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let output = ''
  child.stderr!.on('data', (chunk) => { output += chunk })
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk
      const match = /fastify-expand demo on (http:\/\/\S+)/.exec(output)
      if (match !== null) resolve(match[1]!)
    })
    void exited.then(() => reject(new Error(`the server exited: ${output}`)))
  })
  return { process: child, base, output: () => output, exited }
}
