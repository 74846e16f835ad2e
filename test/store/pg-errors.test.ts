import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { UserQuestionError } from '../../src/protocol/errors.js'
import { isStorageError } from '../../src/store/errors.js'
import { fromPgError } from '../../src/store/pg-errors.js'

const where = 'postgres://askbridge:***@db:5432/askbridge'
const dbError = (code: string) => Object.assign(new pg.DatabaseError('boom', 1, 'error'), { code })

describe('PostgreSQL failures as storage faults', () => {
  it('maps a lost or refused server, a full disk and a read-only database to StorageErrors', () => {
    const cases: Array<[unknown, string]> = [
      [
        Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' }),
        'unavailable',
      ],
      [new Error('Connection terminated unexpectedly'), 'unavailable'],
      [new AggregateError([new Error('a'), new Error('b')]), 'unavailable'],
      [dbError('57P01'), 'unavailable'],
      [dbError('08006'), 'unavailable'],
      [dbError('53100'), 'full'],
      [dbError('25006'), 'read_only'],
      [dbError('40P01'), 'locked'],
    ]
    for (const [error, fault] of cases) {
      const mapped = fromPgError(error, where)
      expect(isStorageError(mapped), String(error)).toBe(true)
      expect((mapped as { fault: string }).fault).toBe(fault)
      expect((mapped as Error).message).toContain(where)
      expect((mapped as { code: string }).code).toBe('STORAGE_UNAVAILABLE')
    }
  })

  it('leaves everything else as it was: a decision refusing, a bug, a constraint', () => {
    const refusal = new UserQuestionError('REPLY_QUEUED', 'a reply is waiting')
    expect(fromPgError(refusal, where)).toBe(refusal)
    const bug = new TypeError('x is undefined')
    expect(fromPgError(bug, where)).toBe(bug)
    const unique = dbError('23505')
    expect(fromPgError(unique, where)).toBe(unique)
  })
})
