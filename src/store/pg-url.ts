/** True when an ASKBRIDGE_DB value names a PostgreSQL database. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value)
}

/** A parsed `postgres://` ASKBRIDGE_DB value. */
export interface PostgresTarget {
  /** The connection string handed to node-postgres (`schema` removed). */
  connectionString: string
  /** The same, safe to print: the password replaced by `***`. */
  redacted: string
  /** The password, to keep out of logs. */
  password?: string
  /** `?schema=NAME`: askbridge's tables live in that schema (created when missing). */
  schema?: string
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/**
 * Parse and check a `postgres://` / `postgresql://` URL. Returns a problem (never echoing the
 * password) instead of throwing, so configuration can name it with every other problem.
 * @example parsePostgresUrl('postgres://askbridge:pw@db:5432/askbridge?schema=bridge')
 */
export function parsePostgresUrl(value: string): { target: PostgresTarget } | { problem: string } {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return { problem: 'is not a valid postgres:// URL' }
  }
  if (!isPostgresUrl(value)) return { problem: 'must start with postgres:// or postgresql://' }
  const redacted = redactUrl(url)
  // A socket directory may be given as ?host=/run/postgresql instead of a hostname.
  if (url.hostname === '' && !url.searchParams.get('host')) {
    return { problem: `names no host (${redacted})` }
  }
  if (url.port !== '' && !/^\d+$/.test(url.port)) return { problem: `has a bad port (${redacted})` }
  const schema = url.searchParams.get('schema') ?? undefined
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    return { problem: `schema must be 1-63 letters, digits or _ starting with a letter (${redacted})` }
  }
  url.searchParams.delete('schema')
  const password = url.password === '' ? undefined : decodeURIComponent(url.password)
  return {
    target: {
      connectionString: url.toString(),
      redacted,
      ...(password === undefined ? {} : { password }),
      ...(schema === undefined ? {} : { schema }),
    },
  }
}

/** A URL with its password replaced, for messages and logs. */
function redactUrl(url: URL): string {
  const copy = new URL(url.toString())
  if (copy.password !== '') copy.password = '***'
  return copy.toString()
}
