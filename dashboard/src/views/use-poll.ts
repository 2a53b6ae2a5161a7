// Polls a GET route while the view is shown: at once, then every `everyMs`; keeps the last answer
// and the last error (an error keeps the previous data visible, marked stale by the caller).
import { useEffect, useState } from "preact/hooks";
import type { Api, ApiError } from "../api.js";

export interface Polled<T> {
  readonly data: T | undefined;
  readonly error: ApiError | undefined;
}

export function usePoll<T>(api: Api, path: string | undefined, everyMs: number, deps: readonly unknown[] = []): Polled<T> {
  const [state, setState] = useState<Polled<T>>({ data: undefined, error: undefined });
  useEffect(() => {
    if (path === undefined) return;
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const data = await api.get<T>(path, ctrl.signal);
        if (!ctrl.signal.aborted) setState({ data, error: undefined });
      } catch (err) {
        if (!ctrl.signal.aborted) setState((s) => ({ data: s.data, error: err as ApiError }));
      }
      if (!ctrl.signal.aborted && everyMs > 0) timer = setTimeout(() => void run(), everyMs);
    };
    void run();
    return () => {
      ctrl.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [api, path, everyMs, ...deps]);
  return state;
}
