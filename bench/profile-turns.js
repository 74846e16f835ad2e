// Where a build's main thread spent its turns: self time by function (or by package), counting only
// the samples of a V8 CPU profile that fall in the turns bench/ab-click.js recorded beside it.
//   node bench/profile-turns.js <dir>/CPU….cpuprofile <dir>/turns-<name>.json [fn|pkg] [rows]
// A whole-run profile mixes in start-up, posting the cards and updating them after each turn; the
// click path is what the ack and the agent wait for.
import { readFileSync } from 'node:fs'

const [profilePath, turnsPath, by = 'fn', rows = '30'] = process.argv.slice(2)
if (!profilePath || !turnsPath) {
  console.error('usage: node bench/profile-turns.js <profile.cpuprofile> <turns.json> [fn|pkg] [rows]')
  process.exit(2)
}
const profile = JSON.parse(readFileSync(profilePath, 'utf8'))
// Each turn [from, to] in ms on the monotonic clock, the clock of the profile's µs timestamps.
const turns = JSON.parse(readFileSync(turnsPath, 'utf8')).map(([from, to]) => [from * 1000, to * 1000])
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))

function key(frame) {
  if (by === 'pkg') {
    const pkg = frame.url.match(/node_modules\/((@[^/]+\/)?[^/]+)/)
    if (pkg) return pkg[1]
    if (frame.url.includes('/dist/'))
      return `askbridge ${frame.url.split('/dist/')[1].split('/').slice(0, 2).join('/')}`
    if (frame.url.startsWith('node:')) return frame.url
    return frame.functionName || `(${frame.url || 'native'})`
  }
  const file = frame.url.split('/').slice(-2).join('/')
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`
}

const self = new Map()
let busy = 0
let t = profile.startTime
let turn = 0
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0
  while (turn < turns.length && turns[turn][1] < t) turn++
  if (turn >= turns.length) break
  if (t < turns[turn][0]) continue
  const frame = nodes.get(profile.samples[i]).callFrame
  if (frame.functionName === '(idle)') continue
  // A sample stands for the time until the next one.
  const dt = profile.timeDeltas[i + 1] ?? 0
  const k = key(frame)
  self.set(k, (self.get(k) ?? 0) + dt)
  busy += dt
}
const inTurns = turns.reduce((sum, [from, to]) => sum + (to - from), 0)
console.log(
  `${turns.length} turns, ${(inTurns / 1000).toFixed(0)} ms; main thread busy ${(busy / 1000).toFixed(0)} ms in them`,
)
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
  console.log(`${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${k}`)
}
