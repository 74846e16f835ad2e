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
-- The append-only log. Reads go to askbridge_calls; the log is for history and audit.
CREATE TABLE askbridge_events (
  seq BIGSERIAL PRIMARY KEY,
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  type TEXT NOT NULL,
  at BIGINT NOT NULL,
  data JSONB NOT NULL
);
CREATE INDEX askbridge_events_call ON askbridge_events (agent_id, call_id, seq);

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
  record JSONB NOT NULL,
  -- A replica that took over a due deadline holds it until lease_until (epoch ms).
  lease_owner TEXT,
  lease_until BIGINT,
  PRIMARY KEY (agent_id, call_id)
);
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
  state JSONB NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (agent_id, call_id)
);
CREATE INDEX askbridge_cards_updated ON askbridge_cards (updated_at);

CREATE TABLE askbridge_posts (
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  dest_key TEXT NOT NULL,
  platform TEXT NOT NULL,
  ref JSONB,
  created_at BIGINT NOT NULL,
  ord BIGSERIAL,
  PRIMARY KEY (agent_id, call_id, dest_key)
);

CREATE TABLE askbridge_audit (
  seq BIGSERIAL PRIMARY KEY,
  agent_id TEXT,
  call_id TEXT,
  at BIGINT NOT NULL,
  data JSONB NOT NULL
);
CREATE INDEX askbridge_audit_call ON askbridge_audit (call_id, seq);
CREATE INDEX askbridge_audit_at ON askbridge_audit (at);
`,
  },
]
