/** `T` with its readonly properties writable: an object built field by field before it is handed on. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
