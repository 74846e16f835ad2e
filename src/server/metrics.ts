/** A handful of hand-written Prometheus metrics; no dependency needed for counters and gauges. */

type Labels = Record<string, string>

interface Metric {
  name: string
  help: string
  type: 'counter' | 'gauge'
  values: Map<string, { labels: Labels; value: number }>
  /** Gauges may be computed when scraped. */
  collect?: () => number | Promise<number>
}

function key(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',')
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
}

export class Metrics {
  private readonly metrics = new Map<string, Metric>()

  counter(name: string, help: string): (labels?: Labels, by?: number) => void {
    const m = this.define(name, help, 'counter')
    return (labels = {}, by = 1) => {
      const k = key(labels)
      const cur = m.values.get(k)
      if (cur) cur.value += by
      else m.values.set(k, { labels, value: by })
    }
  }

  gauge(
    name: string,
    help: string,
    collect?: () => number | Promise<number>,
  ): (value: number, labels?: Labels) => void {
    const m = this.define(name, help, 'gauge')
    if (collect) m.collect = collect
    return (value, labels = {}) => {
      m.values.set(key(labels), { labels, value })
    }
  }

  private define(name: string, help: string, type: Metric['type']): Metric {
    const existing = this.metrics.get(name)
    if (existing) return existing
    const m: Metric = { name, help, type, values: new Map() }
    this.metrics.set(name, m)
    return m
  }

  /** The Prometheus text exposition format (version 0.0.4). */
  async render(): Promise<string> {
    const lines: string[] = []
    for (const m of this.metrics.values()) {
      lines.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} ${m.type}`)
      if (m.collect) {
        let value = Number.NaN
        try {
          value = await m.collect()
        } catch {
          // A failing collector reports NaN rather than breaking the scrape.
        }
        lines.push(`${m.name} ${value}`)
        continue
      }
      if (m.values.size === 0 && m.type === 'counter') lines.push(`${m.name} 0`)
      for (const { labels, value } of m.values.values()) {
        const l = Object.entries(labels)
          .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
          .join(',')
        lines.push(`${m.name}${l ? `{${l}}` : ''} ${value}`)
      }
    }
    return `${lines.join('\n')}\n`
  }
}
