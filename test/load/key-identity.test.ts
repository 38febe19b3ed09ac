import fc from 'fast-check'
import t from 'tap'
import { keyOf } from '../../plugin/load/parent-keys.js'

// A key's identity is its decimal text: the number 1, the bigint 1n and the string '1' are one key
// (drivers return one column in several forms); keyOf keeps safe integers as numbers, so a Map finds them
// without making a string, and must still tell keys apart exactly as their texts do.
const asText = (value: unknown): unknown => {
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  if (value instanceof Uint8Array) return `\u0000bytes:${Buffer.from(value).toString('hex')}`
  return value
}
const sameKey = (a: unknown, b: unknown) => new Map([[keyOf(a), true]]).has(keyOf(b))

t.test('keys are one key exactly when their decimal texts are', async (t) => {
  const edges = [0, -0, 1, -1, 1.5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, 2 ** 60, 1e21]
  const integer = fc.oneof(fc.integer(), fc.constantFrom(...edges), fc.maxSafeInteger(), fc.double({ noNaN: true }))
  const big = fc.oneof(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), fc.constantFrom(2n ** 53n, 2n ** 53n - 1n, -(2n ** 53n) + 1n, 0n))
  const text = fc.oneof(
    integer.map(String), big.map(String),
    fc.constantFrom('', '01', '-0', '+1', '1.0', '1e3', ' 1', '9007199254740993', '-9007199254740991', 'abc'),
    fc.string({ maxLength: 6 })
  )
  const bytes = fc.uint8Array({ maxLength: 4 })
  const key = fc.oneof(integer, big, text, bytes)
  fc.assert(fc.property(key, key, (a, b) => sameKey(a, b) === (asText(a) === asText(b))), { numRuns: 20_000 })
  t.ok(sameKey(1, '1') && sameKey(1n, 1) && sameKey('-9007199254740991', -9007199254740991n), 'driver forms of one key')
  t.ok(sameKey('1152921504606846976', 2n ** 60n), 'past 2^53 by text')
  t.notOk(sameKey(2 ** 60, 2n ** 60n), 'a number past 2^53 is its shortest text (1152921504606847000), not the bigint\'s')
  t.notOk(sameKey('01', 1) || sameKey('1.0', 1) || sameKey(new Uint8Array([49]), '1'), 'other texts are other keys')
})
