import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { createSerializer } from '../../plugin/index.js'
import { Pet, resources } from '../fixtures/pets.js'
import { obtainGc, settledHeap } from './support.js'

// createSerializer with ever new settings (here: distinct `permittedExpands`) makes a new target each time. The
// engine's memo of each target's last plan was an array indexed by target id, so every call left its plan behind
// for good (about 2.5 KB a call). What must hold: the memo dies with its target, and the heap stays flat.

// V8 coverage keeps every compiled script for its report: measured in a child without it (see cache-exhaustion).
if (process.env.NODE_V8_COVERAGE) {
  const environment = { ...process.env, NODE_V8_COVERAGE: '' }
  t.spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], { env: environment }, 'without V8 coverage')
} else {
  t.test('60,000 distinct createSerializer settings keep the heap flat', measure)
}

const paths = ['owner', 'sold_from', 'toys', 'owner.employer']

/** The index-th distinct permitted list: `owner`, then eight base-4 digits, each a path (65,536 lists, all valid). */
function permittedExpands (index: number): string[] {
  const list = ['owner']
  for (let digit = 0; digit < 8; digit++) list.push(paths[Math.floor(index / 4 ** digit) % 4]!)
  return list
}

async function measure (t: Test): Promise<void> {
  const gc = await obtainGc()
  let wrongBodies = 0
  const pet = { id: 1, name: 'Rex', species: 'dog', owner: { id: 2, name: 'Ann', hobbies: 'ski' }, sold_from: null, toys: [] }
  const serialize = (from: number, to: number): void => {
    for (let index = from; index < to; index++) {
      const serializer = createSerializer(Pet, { expand: 'owner', resources, permittedExpands: permittedExpands(index) })
      if (serializer.stringify(pet) !== '{"id":1,"name":"Rex","species":"dog","owner":{"id":2,"name":"Ann","hobbies":"ski"},"sold_from":null,"toys":[]}') wrongBodies++
    }
  }
  serialize(0, 5_000)
  const heapBefore = gc === undefined ? undefined : await settledHeap(gc)
  serialize(5_000, 65_000)
  const heapAfter = gc === undefined ? undefined : await settledHeap(gc)
  t.equal(wrongBodies, 0, 'every serializer writes the expected body')
  if (gc === undefined || heapBefore === undefined || heapAfter === undefined) {
    t.comment('heap growth not measured: this process cannot obtain a garbage collector')
    return
  }
  // Unbounded, 60,000 plans left behind are well over 100 MB.
  const growth = heapAfter - heapBefore
  t.ok(growth < 4 * 1024 * 1024, `heap grew by ${(growth / 1024).toFixed(0)} KiB over 60,000 distinct settings`)
}
