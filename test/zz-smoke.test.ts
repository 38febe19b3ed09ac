import Fastify from 'fastify'
import expandPlugin from '../plugin/index.js'
import { dialects } from './fixtures/dialects.js'
import { openRelationTables } from './fixtures/relation-lists.js'
import { DerivedPerson, derivedResources } from './fixtures/derived.js'
import t from 'tap'
for (const dialect of dialects()) {
  t.test(dialect.name, async (t) => {
    const database = await openRelationTables(t, dialect)
    const app = Fastify()
    await app.register(expandPlugin, { db: database.db, resources: derivedResources })
    app.expand.routes('/people', DerivedPerson, { filter: { pet_count: ['gte', 'eq'], shout: ['eq', 'contains'], last_pet: ['null'] }, sort: ['pet_count', 'last_pet', 'shout'] })
    app.expand.routes('/feed', DerivedPerson, { filter: { pet_count: ['gte', 'eq'] }, sort: ['pet_count', 'last_pet'], pagination: 'cursor', pageSize: 2 })
    await app.ready()
    for (const url of ['/people?filter[pet_count][gte]=1&sort=-pet_count,last_pet&expand=pet_count&limit=2&offset=1', '/people?sort=-last_pet&fields=id,last_pet', '/people?filter[shout][contains]=a&fields=id,shout', '/feed?sort=last_pet&fields=id,last_pet']) {
      database.reset()
      const r = await app.inject(url)
      console.log(dialect.name, url, r.statusCode, r.body)
      console.log(database.statements.join('\n'))
      const next = r.json().next
      if (next) { const r2 = await app.inject(url + '&after=' + next); console.log('next', r2.body); const r3 = await app.inject(url + '&after=' + r2.json().next); console.log('next2', r3.body) }
    }
    await app.close()
  })
}
