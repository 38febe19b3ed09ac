// Type tests (tstyche): what a TypeScript user of the plugin sees.
import { Type, type TInteger, type TObject, type TString } from '@sinclair/typebox'
import Fastify, { type FastifyRequest } from 'fastify'
import type { SelectQueryBuilder } from 'kysely'
import { describe, expect, test } from 'tstyche'
import expandPlugin, {
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
  TooDeepError,
  TooLargeError,
  UnavailableError,
  UnknownFieldError,
  type AnyResource,
  type ExpandableRouteOptions,
  type Resource,
  type Row,
} from '../plugin/index.js'

const Company = defineResource({
  name: 'Company',
  table: 'companies',
  schema: Type.Object({ id: Type.Integer(), name: Type.String() }),
  fields: ['id', 'name'],
})

describe('defineResource', () => {
  test('keeps the schema type', () => {
    expect(Company.name).type.toBe<string>()
    expect(Company).type.toBe<Resource<TObject<{ id: TInteger; name: TString }>>>()
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
    expect(defineResource).type.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { employer: ['Company', { fields: ['id'] }] } })
    expect(defineResource).type.toBeCallableWith({ name: 'P', schema, fields: ['id'], expandable: { employer: () => Company } })
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

  test('load resolves to the rows\' own type', () => {
    const rows = [{ id: 1, name: 'Acme', extra: true }]
    expect(app.expand.load(request, rows)).type.toBe<Promise<Array<{ id: number; name: string; extra: boolean }>>>()
    expect(app.expand.load).type.not.toBeCallableWith(request, [1, 2])
    expect(app.expand.load).type.not.toBeCallableWith(request, [{ id: 1 }], { database: null })
  })

  test('select is a Kysely select of rows', () => {
    expect(app.expand.select(request)).type.toBe<SelectQueryBuilder<any, any, Row>>()
  })

  test('routes takes a resource or its name', () => {
    expect(app.expand.routes).type.toBeCallableWith('/companies', Company)
    expect(app.expand.routes).type.toBeCallableWith('/companies', 'Company', { pageSize: 10 })
    expect(app.expand.routes).type.not.toBeCallableWith('/companies', 42)
  })

  test('request.expansion', () => {
    expect(request.expansion).type.toBeAssignableTo<object | null>()
    expect(request).type.toHaveProperty('expansion')
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
  })

  test('take their documented arguments', () => {
    expect(UnknownFieldError).type.not.toBeConstructableWith(42)
    expect(DatabaseError).type.not.toBeConstructableWith('text')
  })
})
