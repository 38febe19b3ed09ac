import { Type } from '@sinclair/typebox'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { ExpandPluginOptions } from '../../plugin/index.js'
import { defineResource, type AnyResource } from '../../plugin/index.js'
import { Company, Person, Pet, resources } from '../fixtures/pets.js'

/**
 * Plugin registrations that must fail at `register`/`ready()` (or, for the
 * controls, succeed). Kept out of the test files because they are run in a
 * child process: see startup-child.ts.
 */
export const startupCases: Record<string, () => ExpandPluginOptions> = {
  'valid registry': () => ({ resources }),
  'unknown plugin option': () => ({ resources, expandParm: 'x' } as ExpandPluginOptions),
  'maxDepth zero': () => ({ resources, maxDepth: 0 }),
  'cacheSize not an integer': () => ({ resources, cacheSize: 1.5 }),
  'onInvalidExpand unknown': () => ({ resources, onInvalidExpand: 'warn' as 'error' }),
  'same parameter names': () => ({ resources, expandParam: 'fields' }),
  'unresolvable reference': () => ({
    resources: [defineResource({
      name: 'Pet',
      schema: Type.Object({ id: Type.Integer(), owner: Type.Integer() }),
      fields: ['id', 'owner'],
      expandable: { owner: 'Nobody' },
    })],
  }),
  'reachable resource with an unregistered reference': () => ({ resources: [Pet] }),
  'ambiguous bare name': () => {
    const Left = defineResource({ name: 'Person', namespace: 'left', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
    const Right = defineResource({ name: 'Person', namespace: 'right', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })
    const Team = defineResource({
      name: 'Team',
      schema: Type.Object({ id: Type.Integer(), lead: Type.Integer() }),
      fields: ['id', 'lead'],
      expandable: { lead: 'Person' },
    })
    return { resources: [Left, Right, Team] }
  },
  'two resources of one name': () => ({
    resources: [Company, defineResource({ name: 'Company', schema: Type.Object({ id: Type.Integer() }), fields: ['id'] })],
  }),
  'relation option fields names an unknown field': () => ({
    resources: [Company, defineResource({
      name: 'Job',
      schema: Type.Object({ id: Type.Integer(), company: Type.Integer() }),
      fields: ['id', 'company'],
      expandable: { company: [Company, { fields: ['name', 'revenue'] }] },
    })],
  }),
  'relation option expand names an unknown relation': () => ({
    resources: [Company, Person, defineResource({
      name: 'Job',
      schema: Type.Object({ id: Type.Integer(), holder: Type.Integer() }),
      fields: ['id', 'holder'],
      expandable: { holder: [Person, { expand: ['employer.parent'] }] },
    })],
  }),
  'thunk returning something else': () => ({
    resources: [defineResource({
      name: 'Job',
      schema: Type.Object({ id: Type.Integer(), holder: Type.Integer() }),
      fields: ['id', 'holder'],
      expandable: { holder: () => ({ name: 'Person' }) as unknown as AnyResource },
    })],
  }),
  'nested fields that nest forever': () => {
    const Egg: AnyResource = defineResource({
      name: 'Egg',
      schema: Type.Object({ id: Type.Integer(), hen: Type.Integer() }),
      fields: ['id', 'hen'],
      nested: { hen: 'Hen' },
    })
    const Hen: AnyResource = defineResource({
      name: 'Hen',
      schema: Type.Object({ id: Type.Integer(), egg: Type.Integer() }),
      fields: ['id', 'egg'],
      nested: { egg: 'Egg' },
    })
    return { resources: [Egg, Hen] }
  },
  'resources not made by defineResource': () => ({ resources: [{ name: 'Pet' } as unknown as AnyResource] }),
  'resources an object': () => ({ resources: { Pet: resources[0] } as unknown as AnyResource[] }),
  'resources a string': () => ({ resources: 'Pet' as unknown as AnyResource[] }),
  'resources null': () => ({ resources: null as unknown as AnyResource[] }),
  'with db, a table-bound resource relating to one without a table': () => ({
    // Never queried: the child process exits once every case has run.
    db: new Kysely({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) }),
    resources: [Company, Person, defineResource({
      name: 'Collar',
      table: 'collars',
      schema: Type.Object({ id: Type.Integer(), wearer: Type.Integer() }),
      fields: ['id', 'wearer'],
      expandable: { wearer: Person },
    })],
  }),
}
