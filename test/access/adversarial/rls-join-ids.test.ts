import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { sql, type ControlledTransaction } from 'kysely'
import t from 'tap'
import expandPlugin from '../../../plugin/index.js'
import { dialects, type TestDatabase } from '../../fixtures/dialects.js'
import { createTenantTables, seedTenants, tenantResources } from '../../fixtures/tenants.js'

// Attack: ids of a many-to-many relation read from the join table alone. With
// PostgreSQL row-level security through the per-request `db`, an unexpanded
// `tags` listed the ids of tags the policy hides (another tenant's), since the
// statement never read the tags table. What must hold: every id read through
// a join table joins the target table, so the target's policy (and `scope`)
// decides which ids exist, as it does for expanded rows.

declare module 'fastify' {
  interface FastifyRequest {
    rlsTransaction: ControlledTransaction<any> | undefined
  }
}

const postgres = process.env.DATABASE_URL ? dialects().find((dialect) => dialect.name === 'postgres') : undefined
if (postgres === undefined && process.env.REQUIRE_POSTGRES) throw new Error('REQUIRE_POSTGRES is set but DATABASE_URL is not')

async function build (database: TestDatabase, role: string): Promise<FastifyInstance> {
  const resources = tenantResources(false)
  const app = Fastify()
  app.decorateRequest('rlsTransaction')
  app.addHook('onRequest', async (request) => {
    const transaction = await database.db.startTransaction().execute()
    request.rlsTransaction = transaction
    await sql`set local role ${sql.id(role)}`.execute(transaction)
    await sql`select set_config('app.tenant_id', ${String(request.headers['x-tenant'] ?? 0)}, true)`.execute(transaction)
  })
  const end = async (request: FastifyRequest) => {
    const transaction = request.rlsTransaction
    request.rlsTransaction = undefined
    if (transaction !== undefined) await transaction.commit().execute()
  }
  app.addHook('onResponse', end)
  app.addHook('onError', end)
  await app.register(expandPlugin, {
    resources: resources.all,
    db: (request: FastifyRequest) => request.rlsTransaction!,
  })
  app.expand.routes('/posts', resources.Post)
  await app.ready()
  return app
}

t.test('ids through a join table obey the target table\'s row-level security', { skip: postgres === undefined ? 'needs PostgreSQL: set DATABASE_URL' : false }, async (t) => {
  const database = await postgres!.open()
  const role = `fx_ids_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  let roleCreated = false
  t.teardown(async () => {
    if (roleCreated) {
      await sql`drop owned by ${sql.id(role)}`.execute(database.db)
      await sql`drop role ${sql.id(role)}`.execute(database.db)
    }
    await database.close()
  })
  await createTenantTables(database.db)
  await seedTenants(database.db)
  const { rows: [current] } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)
  await sql`create role ${sql.id(role)} nologin`.execute(database.db)
  roleCreated = true
  await sql`grant usage on schema ${sql.id(current!.schema)} to ${sql.id(role)}`.execute(database.db)
  await sql`grant select on all tables in schema ${sql.id(current!.schema)} to ${sql.id(role)}`.execute(database.db)
  // Tags: the shared ones and the caller's tenant's; post_tags has no policy, as join tables usually have none.
  await sql`alter table tags enable row level security`.execute(database.db)
  await sql`create policy tenant_tags on tags using (tenant_id is null or tenant_id = current_setting('app.tenant_id')::int)`.execute(database.db)

  const app = await build(database, role)
  t.teardown(() => app.close())
  const get = async (url: string, tenant: number) => (await app.inject({ url, headers: { 'x-tenant': String(tenant) } })).json()

  // Post 1 is tagged 3 (tenant 2's), 1 (shared) and 2 (tenant 1's); post 5 is tagged 2, 1 and 3.
  t.strictSame(await get('/posts/1?fields=id,tags', 1), { id: 1, tags: [1, 2] }, "tenant 1: not tenant 2's tag 3")
  t.strictSame(await get('/posts/5?fields=id,tags', 2), { id: 5, tags: [1, 3] }, "tenant 2: not tenant 1's tag 2")
  t.strictSame(await get('/posts/1?fields=id,tags&expand=tags', 1), { id: 1, tags: [{ id: 1, label: 'shared' }, { id: 2, label: 'acme' }] },
    'ids and expanded rows agree')
  t.strictSame((await get('/posts?fields=id,tags', 1)).data, [
    { id: 1, tags: [1, 2] }, { id: 2, tags: [2] }, { id: 3, tags: [] }, { id: 4, tags: [1] },
    { id: 5, tags: [1, 2] }, { id: 6, tags: [] }, { id: 7, tags: [4] },
  ], 'the list, every row')
})
