// Port of drf-flex-fields' tests/test_flex_fields_model_serializer.py. Those
// tests call private methods (_should_field_exist, _get_expanded_field_names,
// _get_query_param_value); the behaviour each one pins is checked here
// through responses and isExpanded. Its "cat"/"dog" expandable fields become
// the relations of Animal. Not ported: explicit serializer arguments
// overriding the request's (a route has no per-route fixed fields here) and
// nested serializers ignoring the request (levels below the root never read
// the query here either: there is one plan per request).
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { createSerializer, defineResource, isExpanded } from '../../../plugin/index.js'
import { buildApp, getJson } from '../../helpers/app.js'

const Pet = defineResource({ name: 'Pet', schema: Type.Object({ id: Type.Integer(), name: Type.String(), age: Type.Integer() }), fields: ['name', 'age'] })
const Animal = defineResource({
  name: 'Animal',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), age: Type.Integer(), cat: Type.Integer(), dog: Type.Integer() }),
  fields: ['name', 'age', 'cat', 'dog'],
  expandable: { cat: Pet, dog: Pet },
})

const tom = { id: 1, name: 'Tom', age: 3 }
const rex = { id: 2, name: 'Rex', age: 5 }

async function animalApp (pluginOptions: { onInvalidExpand?: 'ignore' } = {}, permitListExpands?: string[]) {
  const expanded: string[][] = []
  const app = await buildApp({ resources: [Animal], ...pluginOptions }, (app) => {
    const handler = (request: Parameters<typeof isExpanded>[0]) => {
      expanded.push(['cat', 'dog'].filter((field) => isExpanded(request, field)))
      return { id: 9, name: 'Zoo', age: 1, cat: isExpanded(request, 'cat') ? tom : 1, dog: isExpanded(request, 'dog') ? rex : 2 }
    }
    app.get('/animal', { expandable: { resource: Animal } }, async (request) => handler(request))
    app.get('/animals', { expandable: { resource: Animal, list: true, permitListExpands } }, async (request) => [handler(request)])
  })
  return { app, lastExpanded: () => expanded[expanded.length - 1] }
}

t.test('test_field_should_not_exist_if_omitted', async (t) => {
  const { app } = await animalApp()
  t.same((await getJson(app, '/animal?omit=name')).body, { age: 1, cat: 1, dog: 2 })
})

t.test('test_field_should_not_exist_if_not_in_sparse', async (t) => {
  const { app } = await animalApp()
  t.same((await getJson(app, '/animal?fields=age')).body, { age: 1 })
})

t.test('test_field_should_exist_if_ommitted_but_is_parent_of_omit', async (t) => {
  const { app } = await animalApp()
  t.same((await getJson(app, '/animal?expand=cat&omit=cat.age')).body, { name: 'Zoo', age: 1, cat: { name: 'Tom' }, dog: 2 })
})

t.test('test_clean_fields', async (t) => {
  const { app } = await animalApp()
  t.same((await getJson(app, '/animal?omit=cat')).body, { name: 'Zoo', age: 1, dog: 2 })
})

t.test('test_get_expanded_field_names_if_all', async (t) => {
  const { app, lastExpanded } = await animalApp()
  await getJson(app, '/animal?expand=*')
  t.same(lastExpanded(), ['cat', 'dog'])
})

t.test('test_get_expanded_names_but_not_omitted', async (t) => {
  const { app, lastExpanded } = await animalApp()
  t.same((await getJson(app, '/animal?expand=cat,dog&omit=cat')).body, { name: 'Zoo', age: 1, dog: { name: 'Rex', age: 5 } })
  t.same(lastExpanded(), ['dog'])
})

t.test('test_get_expanded_names_but_only_sparse', async (t) => {
  const { app, lastExpanded } = await animalApp()
  t.same((await getJson(app, '/animal?expand=cat&fields=cat')).body, { cat: { name: 'Tom', age: 3 } })
  t.same(lastExpanded(), ['cat'])
})

t.test('test_get_expanded_names_including_omitted_when_defer_to_next_level', async (t) => {
  const { app, lastExpanded } = await animalApp()
  t.same((await getJson(app, '/animal?expand=cat&omit=cat.age')).body, { name: 'Zoo', age: 1, cat: { name: 'Tom' }, dog: 2 })
  t.same(lastExpanded(), ['cat'])
})

t.test('test_set_omit/fields/expand_input_from_query_param: comma lists', async (t) => {
  const { app, lastExpanded } = await animalApp()
  t.same((await getJson(app, '/animal?omit=cat,dog')).body, { name: 'Zoo', age: 1 })
  t.same((await getJson(app, '/animal?fields=cat,dog')).body, { cat: 1, dog: 2 })
  await getJson(app, '/animal?expand=cat,dog')
  t.same(lastExpanded(), ['cat', 'dog'])
})

t.test('test_get_expand_input_from_query_param_limit_to_list_permitted', async (t) => {
  // drf-flex-fields keeps only the permitted "cat"; here the unpermitted "dog" is a 400 unless onInvalidExpand is 'ignore'
  const strict = await animalApp({}, ['cat'])
  const rejected = await getJson(strict.app, '/animals?expand=cat,dog')
  t.equal(rejected.status, 400)
  t.match(rejected.body, { code: 'FST_EXPAND_NOT_PERMITTED' })

  const lenient = await animalApp({ onInvalidExpand: 'ignore' }, ['cat'])
  t.same((await getJson(lenient.app, '/animals?expand=cat,dog')).body, [{ name: 'Zoo', age: 1, cat: { name: 'Tom', age: 3 }, dog: 2 }])
  t.same(lenient.lastExpanded(), ['cat'])
  t.throws(() => createSerializer(Animal, { expand: 'cat,dog', permittedExpands: ['cat'] }), { code: 'FST_EXPAND_NOT_PERMITTED' }, 'the context key of the standalone serializer')
})

t.test('test_parse_request_list_value', async (t) => {
  const { app, lastExpanded } = await animalApp()
  for (const query of ['expand=cat,dog', 'expand=cat&expand=dog', 'expand[]=cat&expand[]=dog']) {
    t.equal((await getJson(app, `/animal?${query}`)).status, 200, query)
    t.same(lastExpanded(), ['cat', 'dog'], query)
  }
})

t.test('test_parse_request_list_value_empty_if_cannot_access_request', async (t) => {
  t.equal(createSerializer(Animal).stringify({ name: 'Zoo', age: 1, cat: 1, dog: 2 }), '{"name":"Zoo","age":1,"cat":1,"dog":2}')
  t.same(createSerializer(Animal).expansion.expandedPaths.size, 0)
})
