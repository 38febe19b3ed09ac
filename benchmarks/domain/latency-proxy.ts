// A TCP proxy that holds every chunk `delay` milliseconds in each direction,
// run in a process of its own (its timers never wait on the measured process's
// event loop): a database a network away, on a machine where the kernel's
// traffic control (netem) is not available.
//
// Run as a child (`latencyProxy`): node --import tsx latency-proxy.ts <host> <port> <delay ms>
import { fork, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

/** A proxy running in its child process: its port on 127.0.0.1, and how to stop it. */
export interface LatencyProxy {
  port: number
  close(): Promise<void>
}

/** Starts a proxy to `host`:`port` holding each chunk `delay` ms each way (Node's timers: at least that, about 0.1 ms more). */
export async function latencyProxy (host: string, port: number, delay: number): Promise<LatencyProxy> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [host, String(port), String(delay)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const listening = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port))
    child.once('exit', (code) => reject(new Error(`the latency proxy exited (${code}) before listening`)))
  })
  return {
    port: listening,
    async close () {
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill()
      await exited
    },
  }
}

/** Forwards `from`'s chunks to `to`, each `delay` ms later; timers of one duration fire in the order they were set. */
function relay (from: net.Socket, to: net.Socket, delay: number): void {
  from.on('data', (chunk) => setTimeout(() => to.write(chunk), delay))
  from.on('end', () => setTimeout(() => to.end(), delay))
  from.on('error', () => to.destroy())
  from.on('close', () => setTimeout(() => to.destroy(), delay))
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send !== undefined) {
  const [host, port, delay] = process.argv.slice(2) as [string, string, string]
  const server = net.createServer({ noDelay: true }, (client) => {
    const upstream = net.connect({ host, port: Number(port), noDelay: true })
    relay(client, upstream, Number(delay))
    relay(upstream, client, Number(delay))
  })
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as net.AddressInfo).port }))
  process.on('disconnect', () => process.exit(0))
}
