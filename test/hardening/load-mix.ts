import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { isDeepStrictEqual } from 'node:util'
import { referenceAnswer } from './reference.js'
import { buildPetApp, settledHeap } from './support.js'

/** The part of autocannon's API used here (it ships no types). */
interface LoadRequest {
  method: 'GET'
  path: string
  onResponse: (status: number, body: string) => void
}
interface LoadOptions {
  url: string
  connections: number
  duration: number
  requests: LoadRequest[]
}
interface LoadResult {
  requests: { average: number; total: number }
  latency: { p99: number }
  errors: number
  timeouts: number
  '2xx': number
  '4xx': number
  '5xx': number
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: LoadOptions) => Promise<LoadResult>

interface MixCase {
  path: string
  status: number
  /** The exact body of a 200, or the codes a 400 may carry. */
  body?: unknown
  codes?: ReadonlySet<string>
}

const queries = [
  '', 'expand=owner', 'expand=owner.employer', 'expand=*', 'expand=~all.*', 'expand=toys&fields=id,toys',
  'fields=id,name&omit=name', 'expand=owner&fields=owner.name', 'expand[]=sold_from&expand=toys', 'omit=owner,toys',
  'expand=owner.employer&fields=id,owner.employer.name', 'fields=*&omit=species',
  // invalid: each must be a 400 with a documented code
  'expand=nope', 'expand=owner..employer', 'fields=owner.__proto__&expand=owner', 'expand=sold_from', 'expand=*.*.*.*.*.*',
  `expand=${'x'.repeat(2001)}`, `fields=${Array(101).fill('id').join(',')}`, 'omit=constructor', 'expand=toys.owner',
]

/** Valid and invalid requests on the detail and list routes, each with what it must get (from the reference reading). */
export function mixCases (): MixCase[] {
  const cases: MixCase[] = []
  for (const list of [false, true]) {
    for (const query of queries) {
      const params = new URLSearchParams(query)
      const values = (name: string) => [...params.getAll(name), ...params.getAll(`${name}[]`)]
      const expected = referenceAnswer(list, { expand: values('expand'), fields: values('fields'), omit: values('omit') })
      const path = `${list ? '/pets' : '/pets/1'}${query === '' ? '' : '?'}${query}`
      cases.push(expected.status === 200 ? { path, status: 200, body: expected.body } : { path, status: 400, codes: expected.codes })
    }
  }
  return cases
}

export interface LoadReport {
  seconds: number
  connections: number
  cases: number
  responses: number
  checked: number
  wrong: number
  /** The first few wrong responses, for the report. */
  wrongSamples: string[]
  status2xx: number
  status4xx: number
  status5xx: number
  errors: number
  timeouts: number
  requestsPerSecond: number
  latencyP99: number
  heapBefore: number | undefined
  heapAfter: number | undefined
}

/**
 * Fires the mix at a real server on 127.0.0.1 for `seconds`, checking every
 * response body exactly (a 200 against its expected body, a 400 against its
 * codes). Heap is measured after a warm-up round and after the run, with `gc`.
 */
export async function runLoad (seconds: number, connections: number, gc: (() => void) | undefined): Promise<LoadReport> {
  const { app } = await buildPetApp()
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const cases = mixCases()
  let checked = 0
  let wrong = 0
  const wrongSamples: string[] = []
  const requests: LoadRequest[] = cases.map((mixCase) => ({
    method: 'GET',
    path: mixCase.path,
    onResponse: (status, body) => {
      checked++
      if (!isRight(mixCase, status, body)) {
        wrong++
        if (wrongSamples.length < 5) wrongSamples.push(`${mixCase.path.slice(0, 80)}: ${status} ${body.slice(0, 200)}`)
      }
    },
  }))
  try {
    const url = `http://127.0.0.1:${port}`
    // The warm-up's responses are checked and counted too; only its heap is left out.
    const warmUp = await autocannon({ url, connections, duration: Math.min(1, seconds), requests })
    const heapBefore = gc === undefined ? undefined : await settledHeap(gc)
    const result = await autocannon({ url, connections, duration: seconds, requests })
    const heapAfter = gc === undefined ? undefined : await settledHeap(gc)
    const both = (key: '2xx' | '4xx' | '5xx' | 'errors' | 'timeouts') => warmUp[key] + result[key]
    return {
      seconds,
      connections,
      cases: cases.length,
      responses: both('2xx') + both('4xx') + both('5xx'),
      checked,
      wrong,
      wrongSamples,
      status2xx: both('2xx'),
      status4xx: both('4xx'),
      status5xx: both('5xx'),
      errors: both('errors'),
      timeouts: both('timeouts'),
      requestsPerSecond: result.requests.average,
      latencyP99: result.latency.p99,
      heapBefore,
      heapAfter,
    }
  } finally {
    await app.close()
  }
}

function isRight (mixCase: MixCase, status: number, text: string): boolean {
  if (status !== mixCase.status) return false
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return false
  }
  if (status === 200) return isDeepStrictEqual(body, mixCase.body) && JSON.stringify(body) === JSON.stringify(mixCase.body)
  const error = body as Record<string, unknown>
  return mixCase.codes!.has(error.code as string) && error.statusCode === 400 && error.error === 'Bad Request' &&
    Object.keys(error).join(',') === 'statusCode,code,error,message'
}
