import Fastify from 'fastify'
import expandPlugin from '../plugin/index.js'
import { handWrittenPageLoader } from './baselines/hand-written.js'
import { createPetsDatabase, Pet, petResources, petResponseSchema } from './domain/pets-db.js'

/**
 * The HTTP contenders, in a process of their own so autocannon and the
 * server do not share an event loop. Every route answers the same payload:
 * a page of pets shaped for `expand=owner.employer,toys` (or its first pet).
 */
async function main (): Promise<void> {
  const rows = Number(process.argv[2] ?? 100)
  const records = handWrittenPageLoader(createPetsDatabase(), 2)(rows, 0)
  const app = Fastify()
  await app.register(expandPlugin, { resources: petResources })
  app.get('/expand/pets', { expandable: { resource: Pet, list: true } }, async () => records)
  app.get('/expand/pets/1', { expandable: { resource: Pet } }, async () => records[0])
  app.get('/static/pets', { schema: { response: { 200: { type: 'array', items: petResponseSchema } } } }, async () => records)
  app.get('/static/pets/1', { schema: { response: { 200: petResponseSchema } } }, async () => records[0])
  app.get('/stringify/pets', async () => records)
  app.get('/stringify/pets/1', async () => records[0])
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  process.send!({ port: address.port })
  process.on('disconnect', () => { void app.close().then(() => process.exit(0)) })
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
