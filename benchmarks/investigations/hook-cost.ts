/*
 * What an expandable route costs over HTTP: the one-pet payload of the HTTP suite from a route with a static
 * response schema (the ceiling), the same route with three hooks that do nothing (a preHandler, a
 * preSerialization and an onSend: what Fastify's hook runners cost, which the plugin's route no longer pays: it
 * adds no hook, routes/reply-writer.ts), and the plugin's route. The server
 * runs in a child process; autocannon (10 connections) alternates the routes round by round. Prints the median
 * requests per second of each and its ratio to the static route.
 *
 *   node --import tsx benchmarks/investigations/hook-cost.ts [rounds] [seconds per round]
 */
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import Fastify, { type FastifySchema } from 'fastify'
import expandPlugin from '../../plugin/index.js'
import { handWrittenPageLoader } from '../baselines/hand-written.js'
import { createPetsDatabase, Pet, petResources, petResponseSchema } from '../domain/pets-db.js'

const routes = ['static', 'static + three empty hooks', 'fastify-expand'] as const
const paths: Record<typeof routes[number], string> = {
  static: '/static', 'static + three empty hooks': '/hooked', 'fastify-expand': '/expand',
}

async function serve (): Promise<void> {
  const [pet] = handWrittenPageLoader(createPetsDatabase(), 2)(1, 0)
  const app = Fastify()
  await app.register(expandPlugin, { resources: petResources })
  const schema: FastifySchema = { response: { 200: petResponseSchema } }
  app.get('/static', { schema }, async () => pet)
  app.get('/hooked', {
    schema,
    preHandler: (_request, _reply, done) => done(),
    preSerialization: (_request, _reply, payload, done) => done(null, payload),
    onSend: (_request, _reply, payload, done) => done(null, payload),
  }, async () => pet)
  app.get('/expand', { expandable: { resource: Pet } }, async () => pet)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  process.send!({ port: address.port })
  process.on('disconnect', () => { void app.close().then(() => process.exit(0)) })
}

async function measure (rounds: number, seconds: number): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: process.execArgv })
  const port = await new Promise<number>((resolve) => child.once('message', (message) => resolve((message as { port: number }).port)))
  const rates = new Map<string, number[]>(routes.map((route) => [route, []]))
  const query = '?expand=owner.employer,toys'
  for (const route of routes) await autocannon({ url: `http://127.0.0.1:${port}${paths[route]}${query}`, connections: 10, amount: 3_000 })
  for (let round = 0; round < rounds; round++) {
    for (const route of routes) {
      const result = await autocannon({ url: `http://127.0.0.1:${port}${paths[route]}${query}`, connections: 10, duration: seconds })
      rates.get(route)!.push(result.requests.average)
    }
  }
  child.disconnect()
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const ceiling = median(rates.get('static')!)
  console.log(`${process.version}, ${rounds} rounds of ${seconds} s`)
  for (const route of routes) {
    const rate = median(rates.get(route)!)
    console.log(`${route}: ${Math.round(rate)} req/s (${(rate / ceiling).toFixed(3)}x static)`)
  }
}

if (process.argv[2] === 'serve') await serve()
else await measure(Number(process.argv[2] ?? 6), Number(process.argv[3] ?? 2))
