/**
 * The PostgreSQL schema, as numbered steps. A step, once released, never changes: add a new
 * one. Steps are additive so a replica still running the previous release keeps working while a
 * rolling deploy brings up the next.
 */
export interface Migration {
  version: number
  name: string
  sql: string
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'event log, calls, cards, posts, audit',
    sql: `
-- JSON is kept as text: byte for byte what SQLite keeps (jsonb refuses \\u0000).
-- The append-only log. Reads go to askbridge_calls; the log is for history and audit.
CREATE TABLE askbridge_events (
  seq BIGSERIAL PRIMARY KEY,
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  type TEXT NOT NULL,
  at BIGINT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX askbridge_events_key ON askbridge_events (agent_id, call_id, seq);
CREATE INDEX askbridge_events_call ON askbridge_events (call_id, seq);

-- One row per call: the log folded. Live questions are found by partial indexes, so work grows
-- with live questions, not with history.
CREATE TABLE askbridge_calls (
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  state TEXT NOT NULL,
  timed BOOLEAN NOT NULL,
  deadline BIGINT,
  asked_seq BIGINT NOT NULL,
  settled_seq BIGINT,
  settled_at BIGINT,
  has_reply BOOLEAN NOT NULL DEFAULT false,
  record TEXT NOT NULL,
  -- A replica that took over a due deadline holds it until lease_until (epoch ms).
  lease_owner TEXT,
  lease_until BIGINT,
  PRIMARY KEY (agent_id, call_id)
);
CREATE INDEX askbridge_calls_agent_state ON askbridge_calls (agent_id, state, asked_seq);
CREATE INDEX askbridge_calls_active ON askbridge_calls (asked_seq) WHERE state IN ('open', 'continued');
CREATE INDEX askbridge_calls_due ON askbridge_calls (deadline) WHERE state = 'open' AND timed;
CREATE INDEX askbridge_calls_replies ON askbridge_calls (agent_id) WHERE has_reply;
CREATE INDEX askbridge_calls_settled ON askbridge_calls (settled_seq) WHERE state = 'settled';
CREATE INDEX askbridge_calls_by_id ON askbridge_calls (call_id);

-- Card state with its compare-and-set version: UPDATE ... WHERE version = $n.
CREATE TABLE askbridge_cards (
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  -- The card's state.status, so live cards are found without reading every card.
  status TEXT,
  state TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  ord BIGSERIAL,
  PRIMARY KEY (agent_id, call_id)
);
CREATE INDEX askbridge_cards_status ON askbridge_cards (status, updated_at, ord);

CREATE TABLE askbridge_posts (
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  dest_key TEXT NOT NULL,
  platform TEXT NOT NULL,
  ref TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  ord BIGSERIAL,
  PRIMARY KEY (agent_id, call_id, dest_key)
);

CREATE TABLE askbridge_audit (
  seq BIGSERIAL PRIMARY KEY,
  agent_id TEXT,
  call_id TEXT,
  at BIGINT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX askbridge_audit_call ON askbridge_audit (call_id, seq);
CREATE INDEX askbridge_audit_at ON askbridge_audit (at);
`,
  },
  {
    version: 2,
    name: 'cards found by callId alone',
    sql: 'CREATE INDEX askbridge_cards_call ON askbridge_cards (call_id, ord);',
  },
  {
    version: 3,
    name: 'post claims: one replica posts each copy',
    sql: `
-- The replica posting a copy holds it until claim_until (epoch ms, renewed while it posts); a
-- lapsed claim is a replica that died between claiming and posting: another takes it over.
ALTER TABLE askbridge_posts ADD COLUMN claim_owner TEXT;
ALTER TABLE askbridge_posts ADD COLUMN claim_until BIGINT;
CREATE INDEX askbridge_posts_claims ON askbridge_posts (claim_until) WHERE claim_until IS NOT NULL;
`,
  },
  {
    version: 4,
    name: 'retention: when each call ended',
    sql: `
ALTER TABLE askbridge_calls ADD COLUMN ended_at BIGINT;
UPDATE askbridge_calls c SET ended_at = COALESCE(c.settled_at, (c.record::json->>'settledAt')::bigint,
  (SELECT max(e.at) FROM askbridge_events e WHERE e.agent_id = c.agent_id AND e.call_id = c.call_id))
  WHERE c.state IN ('settled', 'dropped');
CREATE INDEX askbridge_calls_ended ON askbridge_calls (ended_at) WHERE state IN ('settled', 'dropped');
`,
  },
  {
    version: 5,
    name: 'cards by when they were updated',
    sql: 'CREATE INDEX askbridge_cards_updated ON askbridge_cards (updated_at, ord);',
  },
  {
    version: 6,
    name: 'inbox sign-in sessions and replay-guard keys, shared by the replicas',
    sql: `
-- id: a digest of the secret the session cookie carries.
CREATE TABLE askbridge_sessions (
  id TEXT PRIMARY KEY,
  data TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX askbridge_sessions_expires ON askbridge_sessions (expires_at);
-- Requests seen once (Discord interaction signatures), remembered until they could no longer be replayed.
CREATE TABLE askbridge_seen_once (
  key TEXT PRIMARY KEY,
  until BIGINT NOT NULL
);
CREATE INDEX askbridge_seen_once_until ON askbridge_seen_once (until);
`,
  },
]
