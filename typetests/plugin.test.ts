// Type tests (tstyche): what a TypeScript user of the plugin sees.
import { Type, type TInteger, type TObject, type TString } from '@sinclair/typebox'
import Fastify, { type FastifyRequest } from 'fastify'
import type { SelectQueryBuilder } from 'kysely'
import { describe, expect, test } from 'tstyche'
import expandPlugin, {
  accessErrorCodes,
  BadCursorError,
  BadFilterError,
  BadSortError,
  defineResource,
  DatabaseError,
  ForbiddenError,
  InvalidDataError,
  InvalidDefinitionError,
  InvalidOptionError,
  MalformedError,
  NotFoundError,
  NotPermittedError,
  RecursiveError,
  RequestAbortedError,
  requestErrorCodes,
  TooDeepError,
  TooLargeError,
  UnavailableError,
  UnknownFieldError,
  type AnyResource,
  type ExpandableRouteOptions,
  type Expanded,
  type Expansion,
  type HasExpansion,
  type Loaded,
  type LoadedRelation,
  type Resource,
  type Row,
} from '../plugin/index.js'
import type * as entry from '../plugin/index.js'

const Company = defineResource({
  name: 'Company',
  table: 'companies',
  schema: Type.Object({ id: Type.Integer(), name: Type.String() }),
  fields: ['id', 'name'],
})

describe('defineResource', () => {
  test('keeps the schema type', () => {
    expect(Company.name).type.toBe<string>()
    expect(Company).type.toBe<Resource<TObject<{ id: TInteger; name: TString }>, 'id' | 'name', {}, {}, {}, {}>>()
    expect(Company).type.toBeAssignableTo<AnyResource>()
    expect(Company.fields).type.toBe<readonly ('id' | 'name')[]>()
  })

  test('fields are the schema\'s field names', () => {
    const schema = Type.Object({ id: Type.Integer(), name: Type.String() })
    expect(defineResource).type.toBeCallableWith({ name: 'A', schema, fields: ['id', 'name'] })
    expect(defineResource).type.not.toBeCallableWith({ name: 'A', schema, fields: ['id', 'nope'] })
    expect(defineResource).type.not.toBeCallableWith({ name: 'A', schema, fields: [42] })
  })

  test('expandable and columns name schema fields', () => {
    const schema = Type.Object({ id: Type.Integer(), employer: Type.Integer() })
    expect(defineResource).type.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { employer: Company } })
    expect(defineResource)
      .type.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { employer: ['Company', { fields: ['id'] }] } })
    expect(defineResource).type.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { employer: () => Company } })
    expect(defineResource).type.toBeCallableWith({
      name: 'P', schema, fields: ['id'], nested: { employer: Company }, columns: { employer: 'employer_id' }, primaryKey: 'id',
    })
    expect(defineResource).type.not.toBeCallableWith({ name: 'P', schema, fields: ['id'], columns: { boss: 'boss_id' } })
    expect(defineResource).type.not.toBeCallableWith({ name: 'P', schema, fields: ['id'], primaryKey: 'key' })
    expect(defineResource).type.not.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { employer: 42 } })
    expect(defineResource).type.not.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { boss: Company } })
    expect(defineResource)
      .type.not.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { employer: Company, boss: Company } })
    expect(defineResource).type.not.toBeCallableWith({ name: 'P', schema, fields: ['id'], nested: { boss: Company } })
    expect(defineResource)
      .type.not.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { employer: [Company, { many: 'yes' }] } })
  })

  test('keeps the relations and field names for Expanded', () => {
    const Person = defineResource({
      name: 'Person',
      schema: Type.Object({ id: Type.Integer(), employer: Type.Integer() }),
      fields: ['id'],
      expandable: { employer: [Company, { fields: ['name'] }] },
    })
    expect(Person.fields).type.toBe<readonly 'id'[]>()
    expect(Person.expandable.employer).type.toBe<readonly [typeof Company, { readonly fields: readonly ['name'] }]>()
    expect(Person).type.toBeAssignableTo<AnyResource>()
  })

  test('refuses a schema that is not an object schema', () => {
    expect(defineResource).type.not.toBeCallableWith({ name: 'A', schema: Type.String(), fields: [] })
  })
})

describe('the expandable route option', () => {
  const app = Fastify()

  test('is part of a route\'s options', () => {
    const list: ExpandableRouteOptions = { resource: Company, list: true, permitListExpands: ['employer'] }
    expect(app.get).type.toBeCallableWith('/companies', { expandable: list }, async () => [])
    expect(app.get).type.toBeCallableWith('/companies/:id', { expandable: { resource: 'Company' } }, async () => ({}))
    expect(app.get).type.toBeCallableWith('/plain', { expandable: false }, async () => ({}))
    expect(app.route).type.toBeCallableWith({ method: 'GET', url: '/c', expandable: { resource: Company }, handler: async () => [] })
  })

  test('is a route config setting too', () => {
    expect(app.get).type.toBeCallableWith('/companies', { config: { expandable: { resource: Company, list: true } } }, async () => [])
    expect(app.get).type.not.toBeCallableWith('/companies', { config: { expandable: { resource: 42 } } }, async () => [])
    expect<ExpandableRouteOptions>().type.toHaveProperty('defaultExpand')
    expect<ExpandableRouteOptions>().type.toHaveProperty('envelope')
  })

  test('takes expanded lists and permitExpands', () => {
    const detail: ExpandableRouteOptions = {
      resource: Company,
      permitExpands: ['employees'],
      expandedLists: { employees: { sort: ['name', 'id'], maxLimit: 10, filter: { name: ['eq', 'contains'], id: { operators: ['in'] } } } },
    }
    expect(app.get).type.toBeCallableWith('/companies/:id', { expandable: detail }, async () => ({}))
    expect(app.get).type.not.toBeCallableWith('/companies/:id', {
      expandable: { resource: Company, expandedLists: { employees: { filter: { name: ['between'] } } } },
    }, async () => ({}))
    expect(app.get).type.not.toBeCallableWith('/companies/:id', {
      expandable: { resource: Company, expandedLists: { employees: { maxLimit: '10' } } },
    }, async () => ({}))
  })

  test('refuses what is not a resource', () => {
    expect(app.get).type.not.toBeCallableWith('/companies', { expandable: { resource: 42 } }, async () => [])
    expect(app.get).type.not.toBeCallableWith('/companies', { expandable: { list: true } }, async () => [])
    expect(app.get).type.not.toBeCallableWith('/companies', { expandable: { resource: Company, lst: true } }, async () => [])
  })
})

describe('the expand decorator', () => {
  const app = Fastify()
  app.register(expandPlugin, { resources: [Company] })
  const request = {} as FastifyRequest

  test('load resolves to loaded rows: each field its own type or loaded data', async () => {
    const rows = [{ id: 1, name: 'Acme', extra: true }]
    expect(app.expand.load(request, rows)).type.toBe<Promise<Array<Loaded<{ id: number; name: string; extra: boolean }>>>>()
    const [row] = await app.expand.load(request, rows)
    expect(row!.name).type.toBe<string | LoadedRelation>()
    expect(row!.added).type.toBe<unknown>()
    expect(app.expand.load).type.not.toBeCallableWith(request, [1, 2])
    expect(app.expand.load).type.not.toBeCallableWith(request, [{ id: 1 }], { database: null })
  })

  test('load takes the shape as its type argument', () => {
    const rows = [{ id: 1, name: 'Acme' }]
    expect(app.expand.load<Expanded<typeof Company>>(request, rows)).type.toBe<Promise<Array<{ id: number; name: string }>>>()
  })

  test('load takes rows typed by interfaces and classes', () => {
    interface PersonRow { id: number; name: string; employer_id: number | null }
    class PetRow {
      constructor (readonly id: number, readonly owner: number) {}
    }
    const people: PersonRow[] = []
    const pets: readonly PetRow[] = [new PetRow(1, 2)]
    expect(app.expand.load).type.toBeCallableWith(request, people)
    expect(app.expand.load).type.toBeCallableWith(request, pets)
    expect(app.expand.load(request, pets)).type.toBe<Promise<Array<Loaded<PetRow>>>>()
  })

  test('select is a Kysely select of rows', () => {
    expect(app.expand.select(request)).type.toBe<SelectQueryBuilder<any, any, Row>>()
  })

  test('routes takes a resource or its name', () => {
    expect(app.expand.routes).type.toBeCallableWith('/companies', Company)
    expect(app.expand.routes).type.toBeCallableWith('/companies', 'Company', { pageSize: 10 })
    expect(app.expand.routes).type.not.toBeCallableWith('/companies', 42)
  })

  test('request.expansion is the public Expansion, not the plan', () => {
    expect(request.expansion).type.toBe<Expansion | null>()
    expect<Expansion>()
      .type.toBe<{ readonly key: string; readonly expandedPaths: ReadonlySet<string>; readonly includedPaths: ReadonlySet<string> }>()
    expect(request).type.toBeAssignableTo<HasExpansion>()
    // The plugin plans it; assigning it is refused at runtime too.
    expect(() => { request.expansion = null }).type.toRaiseError('read-only')
  })

  test('explain describes the request', () => {
    expect(app.expand.explain(request).key).type.toBe<string>()
    expect(app.expand.explain(request).statements).type.toBe<Array<{ path: string; sql: string; aggregates?: readonly string[] }>>()
  })

  test('cacheStats counts the serializers', () => {
    expect(app.expand.cacheStats()).type.toHaveProperty('hits')
  })
})

describe('the package entry', () => {
  test('does not export the plan internals', () => {
    expect<typeof entry>().type.not.toHaveProperty('ExpansionPlan')
    // Type-only exports are checked by name: naming one that is gone fails to compile.
    expect<entry.ExpansionPlan>().type.toRaiseError('has no exported member')
    expect<entry.LevelPlan>().type.toRaiseError('has no exported member')
    expect<entry.PlannedField>().type.toRaiseError('has no exported member')
    expect<entry.Expansion>().type.not.toRaiseError()
  })
})

describe('error classes', () => {
  test('carry their code and status as literal types', () => {
    expect(new UnknownFieldError('x').code).type.toBe<'FST_EXPAND_UNKNOWN_FIELD'>()
    expect(new UnknownFieldError('x').statusCode).type.toBe<400>()
    expect(new NotPermittedError('x').code).type.toBe<'FST_EXPAND_NOT_PERMITTED'>()
    expect(new TooDeepError('x').code).type.toBe<'FST_EXPAND_TOO_DEEP'>()
    expect(new RecursiveError('x').code).type.toBe<'FST_EXPAND_RECURSIVE'>()
    expect(new MalformedError('x').code).type.toBe<'FST_EXPAND_MALFORMED'>()
    expect(new TooLargeError('x').code).type.toBe<'FST_EXPAND_TOO_LARGE'>()
    expect(new ForbiddenError('x').code).type.toBe<'FST_EXPAND_FORBIDDEN'>()
    expect(new ForbiddenError('x').statusCode).type.toBe<403>()
    expect(new NotFoundError('x').code).type.toBe<'FST_EXPAND_NOT_FOUND'>()
    expect(new NotFoundError('x').statusCode).type.toBe<404>()
    expect(new InvalidDataError('x').code).type.toBe<'FST_EXPAND_INVALID_DATA'>()
    expect(new DatabaseError({ cause: new Error('x') }).code).type.toBe<'FST_EXPAND_DATABASE_ERROR'>()
    expect(new InvalidDefinitionError('x').code).type.toBe<'FST_EXPAND_INVALID_DEFINITION'>()
    expect(new InvalidOptionError('x').code).type.toBe<'FST_EXPAND_INVALID_OPTION'>()
    expect(new UnavailableError({ cause: new Error('x') }).code).type.toBe<'FST_EXPAND_UNAVAILABLE'>()
    expect(new UnavailableError({ cause: new Error('x') }).statusCode).type.toBe<503>()
    expect(new BadFilterError('x').code).type.toBe<'FST_EXPAND_BAD_FILTER'>()
    expect(new BadSortError('x').code).type.toBe<'FST_EXPAND_BAD_SORT'>()
    expect(new BadCursorError('x').code).type.toBe<'FST_EXPAND_BAD_CURSOR'>()
    expect(new RequestAbortedError().code).type.toBe<'FST_EXPAND_REQUEST_ABORTED'>()
    expect(new RequestAbortedError().statusCode).type.toBe<499>()
    expect(new InvalidOptionError('x')).type.toBeAssignableTo<TypeError>()
    expect(new UnknownFieldError('x')).type.toBeAssignableTo<Error>()
  })

  test('the code lists are tuples of literal codes', () => {
    expect(requestErrorCodes).type.toBe<readonly [
      'FST_EXPAND_UNKNOWN_FIELD', 'FST_EXPAND_NOT_PERMITTED', 'FST_EXPAND_TOO_DEEP', 'FST_EXPAND_RECURSIVE', 'FST_EXPAND_MALFORMED'
    ]>()
    expect(accessErrorCodes).type.toBe<readonly ['FST_EXPAND_FORBIDDEN']>()
  })

  test('take their documented arguments', () => {
    expect(UnknownFieldError).type.not.toBeConstructableWith(42)
    expect(DatabaseError).type.not.toBeConstructableWith('text')
    expect(DatabaseError).type.toBeConstructableWith({ cause: new Error('x') })
    expect(RequestAbortedError).type.not.toBeConstructableWith('text')
  })
})
