import t from 'tap'
import { noExpandedListQuery, readExpandedListQuery } from '../../plugin/parse/expanded-list-query.js'

// The form of `sort[path]`, `limit[path]` and `where[path.field]`: keys as written, or `where`
// as an object from a parser that builds them; what they name is read when the request is planned.

t.test('the bracketed forms, taken apart', async (t) => {
  t.same(readExpandedListQuery({
    'sort[owner.pets]': '-born,,name', 'limit[owner.pets]': '5', limit: '20', sort: 'name', 'where[owner.pets.born][gte]': '2020-01-01', 'where[pets.species]': 'cat',
  }), {
    sorts: [{ path: 'owner.pets', keys: [{ name: 'born', descending: true }, { name: 'name', descending: false }], written: 'sort[owner.pets]' }],
    limits: [{ path: 'owner.pets', limit: 5, written: 'limit[owner.pets]' }],
    wheres: [
      { path: 'owner.pets', field: 'born', operator: 'gte', raw: '2020-01-01', written: 'where[owner.pets.born][gte]' },
      { path: 'pets', field: 'species', operator: '', raw: 'cat', written: 'where[pets.species]' },
    ],
  }, "a list route's own sort and limit are not read here")
  t.equal(readExpandedListQuery({ expand: 'pets', sort: 'name', limit: '2' }), noExpandedListQuery, 'nothing asked: the shared empty query')
  t.same(readExpandedListQuery({ 'limit[pets]': 3 }).limits, [{ path: 'pets', limit: 3, written: 'limit[pets]' }], 'a number a parser made')
})

t.test('where as an object', async (t) => {
  t.same(readExpandedListQuery({ where: { 'pets.species': 'cat', 'pets.born': { gte: '2020-01-01', lt: '2021-01-01' } } }).wheres, [
    { path: 'pets', field: 'species', operator: '', raw: 'cat', written: 'where[pets.species]' },
    { path: 'pets', field: 'born', operator: 'gte', raw: '2020-01-01', written: 'where[pets.born][gte]' },
    { path: 'pets', field: 'born', operator: 'lt', raw: '2021-01-01', written: 'where[pets.born][lt]' },
  ])
  const form = "'where' is not a parameter of an expanded list: write sort[path]=-field,field, limit[path]=n, where[path.field]=value or where[path.field][operator]=value"
  for (const where of ['pets.species', ['a'], null]) {
    t.throws(() => readExpandedListQuery({ where }), { code: 'FST_EXPAND_BAD_FILTER', message: form }, JSON.stringify(where))
  }
  t.throws(() => readExpandedListQuery({ where: { 'pets.species': 'cat' }, 'where[pets.species]': 'dog' }),
    { code: 'FST_EXPAND_BAD_FILTER', message: "'where[pets.species]' is given more than once" }, 'one condition in both forms')
  t.throws(() => readExpandedListQuery({ where: { '.species': 'cat' } }), { code: 'FST_EXPAND_BAD_FILTER' }, 'no path')
  t.throws(() => readExpandedListQuery({ where: { 'pets.': 'cat' } }), { code: 'FST_EXPAND_BAD_FILTER' }, 'no field')
})
