import t from 'tap'
import { expandOpenApi } from '../../plugin/index.js'
import { DerivedPerson, derivedResources } from '../fixtures/derived.js'

// Aggregates and computed fields in the document: read-only, typed, and (when deferred) not required.
type Json = Record<string, any>

t.test('deferred derived fields are declared read-only with their types, never required', async (t) => {
  const openApi = expandOpenApi({ resources: derivedResources })
  const described = openApi.describeRoute({ resource: DerivedPerson })
  t.same((described.response as Json)[200], { description: 'One Person', $ref: '#/components/schemas/Person' })
  const components = openApi.components() as Json
  const body = components.Person as Json
  const properties = body.properties as Json
  const note = 'Derived by the database; present only when named in expand or fields'
  t.same(properties.pet_count, { description: note, type: 'integer', readOnly: true })
  t.same(properties.last_pet, { description: note, type: ['string', 'null'], readOnly: true })
  t.same(properties.pet_id_sum, { description: note, type: ['integer', 'null'], readOnly: true }, 'the summed field\'s type')
  t.same(properties.pet_id_avg, { description: note, type: ['number', 'null'], readOnly: true })
  t.same(properties.youngest_report, { description: note, type: ['string', 'null'], format: 'date', readOnly: true })
  t.same(properties.shout, { description: note, type: 'string', readOnly: true })
  t.same(Object.keys(properties), [
    'id', 'name', 'employer', 'manager', 'pets', 'reports',
    'pet_count', 'cat_count', 'last_pet', 'pet_id_sum', 'pet_id_avg', 'report_count', 'youngest_report', 'shout',
  ])
  t.notOk((body.required as string[] | undefined)?.some((name) => name.endsWith('_count')), 'a deferred field is never required')
  t.same(components.Pet.properties.label, { description: note, type: 'string', readOnly: true }, 'and on every resource')
})

t.test('a restricted list names its derived fields in fields and omit: the list shows them when named, whatever it permits', async (t) => {
  const openApi = expandOpenApi({ resources: derivedResources })
  const described = openApi.describeRoute({ resource: DerivedPerson, list: true, permitListExpands: ['employer'] }) as Json
  const derived = 'pet_count, cat_count, last_pet, pet_id_sum, pet_id_avg, report_count, youngest_report, shout'
  t.match(described.querystring.fields.description, `Only these fields (Person: id, name, employer, ${derived}). `,
    'of the relations, only employer: the list permits no other')
  t.match(described.querystring.omit.description, `Leave these fields out (Person: id, name, employer, ${derived}); `)
})
