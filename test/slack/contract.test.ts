import { runAdapterContract } from '../contract/adapter-contract.js'
import { slackHarness, startSlackRig } from './rig.js'

// The same suite, once per transport: Socket Mode and signed HTTP interactivity.
runAdapterContract('slack (Socket Mode)', async () => slackHarness(await startSlackRig('socket')))
runAdapterContract('slack (HTTP)', async () => slackHarness(await startSlackRig('http')))
