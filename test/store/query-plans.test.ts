import Database from 'better-sqlite3'
import { afterAll, expect, test } from 'vitest'
import { migrateSqlite } from '../../src/store/sqlite-schema.js'
import { sqliteStatements } from '../../src/store/sqlite-statements.js'
import { tempDir } from '../helpers/service.js'

// Work grows with live questions, not history: what serving and the periodic jobs read goes
// through an index, never a scan of a whole table (SQLite's own query plan says which).
const { dir, cleanup } = tempDir()
afterAll(cleanup)

test('the statements serving and retention run read through indexes', () => {
  const db = new Database(`${dir}/plans.db`)
  migrateSqlite(db, 'plans.db')
  const stmts = sqliteStatements(db)
  const indexed = [
    'getCall',
    'findCalls',
    'active',
    'activeOfAgent',
    'settledPage',
    'settledPageOfAgent',
    'getCard',
    'findCards',
    'eventsOfKey',
    'auditKey',
    'endedCalls',
    'pruneAudit',
  ] as const
  for (const name of indexed) {
    const source = stmts[name].source
    const params = (source.match(/\?/g) ?? []).map(() => 1)
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...params) as Array<{ detail: string }>)
      .map((row) => row.detail)
      .join('; ')
    expect(plan, name).toMatch(/USING (COVERING )?(INDEX|INTEGER PRIMARY KEY|PRIMARY KEY)/)
    expect(plan, name).not.toMatch(
      /^SCAN (calls|cards|events|audit|posts)\b|; SCAN (calls|cards|events|audit|posts)\b/,
    )
  }
  // Retention reads the oldest ended calls in index order: no sort of every ended call.
  const ended = (
    db.prepare(`EXPLAIN QUERY PLAN ${stmts.endedCalls.source}`).all(1, 1) as Array<{ detail: string }>
  )
    .map((row) => row.detail)
    .join('; ')
  expect(ended).toMatch(/USING INDEX calls_ended/)
  expect(ended).not.toMatch(/TEMP B-TREE/)
  db.close()
})
