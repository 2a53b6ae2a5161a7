// Polls one SDK call while the view is shown: at once, then every `everyMs` (0: once per change of
// `deps`); keeps the last answer and the last problem (a problem keeps the previous data visible).
import { useEffect, useState } from "preact/hooks";
import { problemOf, type HypercacheClient, type Problem } from "../api.js";

export interface Polled<T> {
  readonly data: T | undefined;
  readonly error: Problem | undefined;
}

/** `load` calls the client with the signal that ends it when the view goes away. */
export function usePoll<T>(client: HypercacheClient, load: (client: HypercacheClient, signal: AbortSignal) => Promise<T>, everyMs: number, deps: readonly unknown[] = []): Polled<T> {
  const [state, setState] = useState<Polled<T>>({ data: undefined, error: undefined });
  useEffect(() => {
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const data = await load(client, ctrl.signal);
        if (!ctrl.signal.aborted) setState({ data, error: undefined });
      } catch (err) {
        if (!ctrl.signal.aborted) setState((s) => ({ data: s.data, error: problemOf(err) }));
      }
      if (!ctrl.signal.aborted && everyMs > 0) timer = setTimeout(() => void run(), everyMs);
    };
    void run();
    return () => {
      ctrl.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [client, everyMs, ...deps]);
  return state;
}
