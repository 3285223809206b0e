/** The map's value for the key, made by `create` (and kept) the first time the key is asked for. */
export function getOrAdd<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  const found = map.get(key);
  if (found !== undefined) return found;
  const made = create();
  map.set(key, made);
  return made;
}
