import { Ajv, type ValidateFunction } from 'ajv'
import fc from 'fast-check'
import t from 'tap'
import { inMemoryDemo } from '../../demo/readme-examples.js'
import { propertyParameters } from '../hardening/support.js'

/*
 * The document tells the truth: every response of the demo app, for random
 * combinations of expand, fields and omit (valid and not), filters and ids,
 * validates against the OpenAPI document's schema for its route and status,
 * and every status it answers is documented. `fields`/`omit` can leave out
 * any field, so no field a response may lack is `required`.
 */

type Json = Record<string, any>

const { app, close } = await inMemoryDemo()
t.teardown(close)
const document: Json = (await app.inject('/docs/json')).json()
const ajv = new Ajv({ strict: false, allErrors: true })
const validators = new Map<string, ValidateFunction>()

/** The validator of one documented response body, its `$ref`s resolved against the document's components. */
function validatorOf (path: string, status: number): ValidateFunction | undefined {
  const key = `${path} ${status}`
  let validate = validators.get(key)
  if (validate === undefined) {
    const response = document.paths[path]?.get?.responses?.[String(status)]
    const schema = response?.content?.['application/json']?.schema
    if (schema === undefined) return undefined
    validate = ajv.compile({ ...schema, components: document.components })
    validators.set(key, validate)
  }
  return validate
}

function resolve (schema: Json): Json {
  const ref = schema.$ref as string | undefined
  return ref === undefined ? schema : document.components.schemas[ref.slice('#/components/schemas/'.length)]
}

interface RouteModel { path: string; detail: boolean; expand: string[]; names: string[] }

/** The names a route's requests may use: its expand enum, and its resource's fields with dot paths below the relations. */
function routeModel (path: string): RouteModel {
  const operation = document.paths[path].get
  const expandParameter = operation.parameters.find((parameter: Json) => parameter.name === 'expand')
  const expand: string[] = expandParameter?.schema.items.enum?.filter((value: string) => value !== '') ?? []
  const body = operation.responses['200'].content['application/json'].schema
  const item = resolve(body.properties?.data?.items ?? body)
  const names = Object.keys(item.properties)
  const nested = expand.filter((value) => !value.includes('*') && !value.includes('~')).flatMap((relation) => [`${relation}.id`, `${relation}.name`])
  return { path, detail: path.endsWith('{id}'), expand, names: [...names, ...nested, 'nope', '*'] }
}

const routes = Object.keys(document.paths).filter((path) => path !== '/health').map(routeModel)

const request = fc.record({
  route: fc.constantFrom(...routes),
  id: fc.integer({ min: 1, max: 120 }),
  pick: fc.array(fc.nat(), { maxLength: 4 }),
  fieldsPick: fc.option(fc.array(fc.nat(), { minLength: 1, maxLength: 4 })),
  omitPick: fc.option(fc.array(fc.nat(), { minLength: 1, maxLength: 3 })),
  expandAbsent: fc.boolean(),
  filterLength: fc.option(fc.constantFrom(1, 32, 33, 1000, 1001)),
})

function urlOf (value: Json): string {
  const route: RouteModel = value.route
  const base = route.detail ? route.path.replace('{id}', String(value.id)) : route.path
  const parameters: string[] = []
  const pickFrom = (list: string[], picks: number[]) => [...new Set(picks.map((index) => list[index % list.length]!))]
  if (!value.expandAbsent && route.expand.length > 0) parameters.push(`expand=${pickFrom(route.expand, value.pick).join(',')}`)
  if (value.fieldsPick !== null) parameters.push(`fields=${pickFrom(route.names, value.fieldsPick).join(',')}`)
  if (value.omitPick !== null) parameters.push(`omit=${pickFrom(route.names, value.omitPick).join(',')}`)
  if (value.filterLength !== null && route.path === '/pets') parameters.push(`filter[name][contains]=${'x'.repeat(value.filterLength)}`)
  if (value.filterLength !== null && route.path === '/visits') parameters.push(`filter[reason]=${'x'.repeat(value.filterLength)}`)
  return parameters.length === 0 ? base : `${base}?${parameters.join('&')}`
}

t.test('every response validates against the document for its route and status', async (t) => {
  const statuses = new Map<number, number>()
  let narrowed = 0
  await fc.assert(fc.asyncProperty(request, async (value) => {
    const url = urlOf(value as Json)
    const response = await app.inject(url)
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
    if (response.statusCode === 200 && /[?&](fields|omit)=/.test(url)) narrowed++
    const validate = validatorOf(value.route.path, response.statusCode)
    if (validate === undefined) throw new Error(`${url}: status ${response.statusCode} is not documented: ${response.body}`)
    if (!validate(response.json())) throw new Error(`${url}: ${response.body} does not fit: ${JSON.stringify(validate.errors)}`)
  }), propertyParameters(1333))
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}; 200s narrowed by fields or omit: ${narrowed}`)
  t.ok((statuses.get(200) ?? 0) > 100, 'many successes')
  t.ok((statuses.get(400) ?? 0) > 50, 'many refusals')
  t.ok(narrowed > 100, 'many responses narrowed by fields or omit')
})

t.test("Fastify's own 400 for a malformed URL is documented, with its body", async (t) => {
  for (const [url, path] of [['/toys/%', '/toys/{id}'], ['/pets/%zz', '/pets/{id}']] as const) {
    const response = await app.inject(url)
    t.equal(response.statusCode, 400, url)
    t.equal(response.json().code, 'FST_ERR_BAD_URL')
    const validate = validatorOf(path, 400)!
    t.ok(validate(response.json()), `${url}: ${JSON.stringify(validate.errors)}`)
  }
})
