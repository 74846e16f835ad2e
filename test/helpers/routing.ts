import { PLATFORMS } from '../../adapters/platforms.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { validateRoutes } from '../../src/routing/routes.js'

/** A deploy gate: one approval question. */
export const deployApproval: AskUserQuestionItem = {
  id: 'deploy',
  question: 'Deploy 4f2c1 to production?',
  header: 'Prod',
  detail: 'Fixes the login bug.',
  options: [{ label: 'Approve' }, { label: 'Reject' }],
  intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
}

/** An on-call route for production approvals, on Slack. */
export const onCallRoutes = validateRoutes(
  {
    routes: [
      {
        name: 'prod-approvals',
        match: { intent: 'approval', agentId: 'deploy-*' },
        destinations: [{ platform: 'slack', channel: 'C0123ONCALL', mention: ['subteam:S0ONCALL'] }],
        responders: { slack: { users: ['U0LEAD'], groups: ['S0ONCALL'] } },
        quorum: 2,
        excludeRequester: true,
        escalation: [
          { after: '10m', mention: ['subteam:S0SECONDARY'] },
          { after: '30m', destinations: [{ platform: 'slack', channel: 'C0MANAGERS' }] },
        ],
      },
    ],
  },
  PLATFORMS,
)

/** A clock the test moves by hand. */
export function manualClock(start = 1_000_000) {
  let t = start
  return { now: () => t, advance: (ms: number) => (t += ms) }
}
