// Strict TypeScript consumer of the packed package with TypeBox 1.x (the
// `typebox` package) and without @sinclair/typebox: the shipped declarations
// must not need the other TypeBox.
import Fastify from 'fastify'
import expandPlugin, { createSerializer, defineResource, type Expanded } from 'fastify-expand'
import { Type } from 'typebox'

const Company = defineResource({
  name: 'Company',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), motto: Type.Optional(Type.String()) }),
  fields: ['id', 'name', 'motto'],
})
const Person = defineResource({
  name: 'Person',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), employer: Type.Union([Type.Integer(), Type.Null()]) }),
  fields: ['id', 'name', 'employer'],
  expandable: { employer: Company },
})

const app = Fastify()
await app.register(expandPlugin, { resources: [Company, Person] })
app.get('/people/:id', { expandable: { resource: Person } }, async () => ({ id: 1, name: 'Jon', employer: null }))

const person: Expanded<typeof Person, 'employer'> = createSerializer(Person, { expand: 'employer' })
  .shape({ id: 1, name: 'Jon', employer: null })
const employer: { id: number; name: string; motto?: string } | null = person.employer
void employer

// @ts-expect-error: a field name that the schema does not declare
defineResource({ name: 'Bad', schema: Type.Object({ id: Type.Integer() }), fields: ['nope'] })
