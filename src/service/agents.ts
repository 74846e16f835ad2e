import type { Agent } from '../protocol/types.js'

/**
 * Live agents. Liveness is object identity: a stale object that reuses a live id is not live.
 */
export class AgentRegistry {
  private readonly live = new Map<string, Agent>()

  /** Register a new live instance for `id`, replacing any earlier one. */
  register(id: string, options: { delegated?: boolean; requester?: Agent['requester'] } = {}): Agent {
    const agent: Agent = Object.freeze({
      id,
      ...(options.delegated ? { delegated: true } : {}),
      ...(options.requester ? { requester: options.requester } : {}),
    })
    this.live.set(id, agent)
    return agent
  }

  /**
   * The live root agent for `id`, registering one when there is none, or when `requester` (the
   * person a token says the agent acts for) differs from the live one's.
   */
  ensure(id: string, requester?: Agent['requester']): Agent {
    const existing = this.live.get(id)
    const same =
      requester === undefined ||
      (existing?.requester?.platform === requester.platform && existing.requester.userId === requester.userId)
    if (existing && !existing.delegated && same) return existing
    return this.register(id, requester ? { requester } : {})
  }

  get(id: string): Agent | undefined {
    return this.live.get(id)
  }

  isLive(agent: Agent): boolean {
    return this.live.get(agent.id) === agent
  }

  unregister(agent: Agent): void {
    if (this.live.get(agent.id) === agent) this.live.delete(agent.id)
  }
}
