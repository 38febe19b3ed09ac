import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t from 'tap'
import expandPlugin from '../../plugin/index.js'
import { dialects, type TestDatabase } from '../fixtures/dialects.js'
import { Pet, openSeeded, resources, handlerPetColumns } from '../fixtures/tables.js'

// A handler that writes in a transaction and answers with the expanded row
// must load through that transaction: it sees the rows written there (on a
// pool, another connection would not; on SQLite's single connection, waiting
// for it would never end), and an error while loading rolls the write back.

const newPet = { id: 10, name: 'Tom', species: 'cat', owner_id: 2, sold_from_id: null }

async function build (database: TestDatabase): Promise<FastifyInstance> {
  const app = Fastify()
  // The pet's 3 toys are 3 loaded objects, as ids or expanded, its owner 1 and the owner's employer 1: over the
  // limit of 4 when all are loaded (the given row is not counted).
  await app.register(expandPlugin, { db: database.db, resources, maxObjects: 4 })
  app.post('/pets', { expandable: { resource: Pet } }, async (request) => {
    return database.db.transaction().execute(async (trx) => {
      await trx.insertInto('pets').values(newPet).execute()
      await trx.insertInto('pet_toys').values([{ pet_id: 10, toy_id: 3 }, { pet_id: 10, toy_id: 1 }, { pet_id: 10, toy_id: 2 }]).execute()
      const row = await trx.selectFrom('pets').select(handlerPetColumns).where('id', '=', 10).executeTakeFirstOrThrow()
      const [loaded] = await app.expand.load(request, [row], { db: trx })
      return loaded
    })
  })
  await app.ready()
  return app
}

/** The response, or a failure after `ms`: loading outside the transaction on SQLite waits forever. */
async function post (app: FastifyInstance, url: string, ms = 1000): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`POST ${url} did not answer within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([app.inject({ method: 'POST', url }), timeout])
  } finally {
    clearTimeout(timer)
  }
}

async function storedPets (database: TestDatabase): Promise<unknown[]> {
  return database.db.selectFrom('pets').select(['id']).where('id', '=', 10).execute()
}

async function storedToys (database: TestDatabase): Promise<unknown[]> {
  return database.db.selectFrom('pet_toys').select(['toy_id']).where('pet_id', '=', 10).execute()
}

for (const dialect of dialects()) {
  t.test(`app.expand.load through a transaction on ${dialect.name}`, async (t) => {
    t.test('too large: 400, and the inserted rows are rolled back', async (t) => {
      const database = await openSeeded(t, dialect)
      const app = await build(database)
      t.teardown(() => app.close())
      const response = await post(app, '/pets?expand=toys,owner.employer')
      t.same({ status: response.statusCode, body: response.json() }, {
        status: 400,
        body: {
          statusCode: 400,
          code: 'FST_EXPAND_TOO_LARGE',
          error: 'Bad Request',
          message: 'The expanded relations would hold more than 4 objects: expand fewer relations or ask for a smaller page',
        },
      })
      t.same(await storedPets(database), [], 'the pet is not in the table')
      t.same(await storedToys(database), [], 'nor its toys')
    })

    t.test('small enough: 200 with what the transaction wrote, and the rows are committed', async (t) => {
      const database = await openSeeded(t, dialect)
      const app = await build(database)
      t.teardown(() => app.close())
      const response = await post(app, '/pets?expand=owner')
      t.same({ status: response.statusCode, body: response.json() }, {
        status: 200,
        body: {
          id: 10,
          name: 'Tom',
          species: 'cat',
          owner: { id: 2, name: 'Sally', hobbies: 'hiking', employer: 2 },
          sold_from: null,
          toys: [1, 2, 3],
        },
      }, 'the toy ids written in the transaction are read through it')
      t.same(await storedPets(database), [{ id: 10 }], 'the pet is in the table')
      t.same(await storedToys(database), [{ toy_id: 3 }, { toy_id: 1 }, { toy_id: 2 }], 'with its toys')
    })
  })
}
