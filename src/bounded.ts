/**
 * Set `key` in a map kept to at most `limit` entries: `key` becomes the newest, and the oldest go
 * once there are more. A Map keeps its keys in insertion order, so this keeps the last written.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key)
  map.set(key, value)
  while (map.size > limit) map.delete(map.keys().next().value as K)
}
