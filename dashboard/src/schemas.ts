// The management API's JSON shapes, from the generated OpenAPI types (gen/openapi/management.ts):
// a contract change that breaks a view fails the dashboard's type-check.
import type { components } from "../../gen/openapi/management.js";

type S = components["schemas"];
export type MembersView = S["Members"];
export type RingView = S["Ring"];
export type HintsView = S["Hints"];
export type HintQueueView = S["HintQueueView"];
export type KeyPage = S["KeyBrowserPage"];
export type StatsView = S["Stats"];
export type DrainView = S["DrainStatus"];
export type KeyReplicas = S["KeyReplicas"];
export type ReplicaCopy = S["ReplicaCopy"];
export type ValuePreview = S["ValuePreview"];
export type Identity = S["Identity"];
