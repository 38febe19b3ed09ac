import { expressionBuilder, sql } from 'kysely'
import t from 'tap'
import { scopeParts } from '../../plugin/sql/statement-templates.js'

interface Tables { pets: { id: number; tenant_id: number; species: string; born: string } }
const eb = expressionBuilder<Tables, 'pets'>()

t.test('a scope splits into a shape and its values, in the order they are written', async (t) => {
  const first = scopeParts(eb.and([eb('pets.tenant_id', '=', 1), eb('pets.species', 'in', ['cat', 'dog'])]))
  const second = scopeParts(eb.and([eb('pets.tenant_id', '=', 2), eb('pets.species', 'in', ['owl', 'eel'])]))
  t.same(first.values, [1, 'cat', 'dog'])
  t.same(second.values, [2, 'owl', 'eel'])
  t.type(first.key, 'string')
  t.equal(first.key, second.key, 'the same shape for other values')
})

t.test('other shapes have other keys', async (t) => {
  const keys = [
    eb('pets.tenant_id', '=', 1),
    eb('pets.tenant_id', '>', 1),
    eb('pets.id', '=', 1),
    eb('pets.species', 'in', ['cat', 'dog']),
    eb('pets.species', 'in', ['cat', 'dog', 'owl']),
    eb.and([eb('pets.tenant_id', '=', 1), eb('pets.id', '=', 1)]),
    eb.or([eb('pets.tenant_id', '=', 1), eb('pets.id', '=', 1)]),
    eb('pets.species', '=', eb.ref('pets.born')),
    eb('pets.species', '=', eb.val('cat')),
    eb('pets.tenant_id', '=', eb.lit(1)),
    eb('pets.tenant_id', '=', eb.lit(2)),
  ].map((condition) => scopeParts(condition).key)
  t.equal(new Set(keys).size, keys.length, keys.join('\n'))
})

t.test('a literal is part of the shape, not a value', async (t) => {
  const parts = scopeParts(eb('pets.tenant_id', '=', eb.lit(1)))
  t.same(parts.values, [])
  t.not(parts.key, null)
})

t.test('a condition holding what a shape cannot stand for has no key', async (t) => {
  const parts = scopeParts(sql<boolean>`pets.born > ${sql.lit(new Date('2020-01-01T00:00:00Z'))}`)
  t.equal(parts.key, null)
})

t.test('strings in the shape are quoted: a name cannot pass for structure', async (t) => {
  const plain = scopeParts(eb('pets.species', '=', eb.ref('pets.born'))).key
  const tricky = scopeParts(sql<boolean>`${sql.ref('pets.species')} = ${sql.ref('pets.born')}`).key
  t.not(plain, tricky)
  t.match(scopeParts(sql<boolean>`${sql.raw('species,}')} = 1`).key, /"species,}"/)
})
