// A one-entry memo keyed by a string: the result for the last key computed, computed again only
// when the key changes. For parses that clients repeat request after request (a lease read sends
// the same `?lease=10s&wait=2s` every time); a compute that throws leaves the memo as it was.
// The results are shared between calls, so they must not be mutated.

/** `compute`, remembering its result for the last key. */
export function lastValue<T>(compute: (key: string) => T): (key: string) => T {
  let lastKey: string | undefined;
  let last: T | undefined;
  return (key) => {
    if (key !== lastKey) {
      last = compute(key);
      lastKey = key;
    }
    return last as T;
  };
}
