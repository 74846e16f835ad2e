/**
 * The SQLite writer thread: it holds the writing connection of every database file the process
 * has open and commits their batches of writes (sqlite-writer-batch.ts), then makes them durable
 * (sqlite-sync.ts) before it replies. The main thread only decides and reads, so a commit's
 * statements, page writes and savepoints no longer take turns with the requests it serves.
 * Started by sqlite-writer-thread.ts; the messages are `WriterRequest` and `WriterReply`.
 */
import { parentPort, receiveMessageOnPort } from 'node:worker_threads'
import { WriterBatches, type WriterRequest } from './sqlite-writer-batch.js'

const port = parentPort
if (!port) throw new Error('sqlite-writer runs as a worker thread')
const batches = new WriterBatches()

port.on('message', (first: WriterRequest) => {
  // Every request waiting in the port is taken with the first: the batches sent while this thread
  // was syncing share the next sync, instead of one sync each.
  const requests = [first]
  for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) {
    requests.push(next.message as WriterRequest)
  }
  for (const reply of batches.handle(requests)) port.postMessage(reply)
})
