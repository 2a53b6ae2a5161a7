// Last-write-wins order of versions: the higher version wins; on a tie the lexicographically
// smaller origin wins, so every node picks the same winner.

/** Positive when (versionA, originA) is newer than (versionB, originB), 0 when equal. */
export function compareVersions(versionA: number, originA: string, versionB: number, originB: string): number {
  if (versionA !== versionB) return versionA > versionB ? 1 : -1;
  if (originA === originB) return 0;
  return originA < originB ? 1 : -1;
}
