import Database from 'better-sqlite3'
import type { Kysely } from 'kysely'
import { createRelationTables } from '../../test/fixtures/relation-lists.js'
import { kyselyOver, type KyselyOverOptions } from './pets-db.js'

/**
 * The lists-through-relations domain of the tests (test/fixtures/relation-lists.ts) in an in-memory SQLite
 * database, at a size the tests do not reach: `people` people, each with 0 to 3 pets (1 pet in 20 deleted,
 * 1 in 5 a cat, names spread over 97 values), 9 in 10 with an employer among 200 companies (1 in 10 hidden
 * by the companies' scope), with the fixture's indexes (pets_owner, people_name) and ANALYZE; the Kysely
 * instance over it built with `options`.
 */
export async function createPeopleAndPets (
  people: number,
  options: KyselyOverOptions = {}
): Promise<{ database: Database.Database; db: Kysely<any> }> {
  const database = new Database(':memory:')
  database.pragma('journal_mode = MEMORY')
  const db = kyselyOver(database, options)
  await createRelationTables(db)
  database.exec(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
    INSERT INTO companies (id, name, hidden) SELECT i, printf('Company %03d', (i * 37) % 200), i % 10 = 0 FROM n;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${people})
    INSERT INTO people (id, name, born, employer_id, manager_id)
    SELECT i, printf('Person %06d', (i * 7919) % ${people}), NULL, CASE WHEN i % 10 = 0 THEN NULL ELSE 1 + (i * 31) % 200 END, NULL FROM n;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${people}), k(j) AS (VALUES (0), (1), (2))
    INSERT INTO pets (name, species, owner_id, deleted)
    SELECT printf('Pet %02d', (i * 13 + j * 7) % 97),
      CASE (i * 7 + j * 3) % 5 WHEN 0 THEN 'cat' WHEN 1 THEN 'dog' WHEN 2 THEN 'fish' WHEN 3 THEN 'owl' ELSE 'rat' END,
      i, (i + j) % 20 = 0
    FROM n JOIN k ON k.j < (i * 13) % 4 ORDER BY i, j;
    ANALYZE;
  `)
  return { database, db }
}
