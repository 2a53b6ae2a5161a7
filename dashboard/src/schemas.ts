// The management API's JSON shapes, as the SDK types them from its generated OpenAPI types
// (packages/client/src/gen/management.ts): a contract change that breaks a view fails the
// dashboard's type-check.
import type { HintsView, KeyBrowserPage, KeyReplicas, ManagementIdentity, MembersView, ValuePreview } from "@hypercache/client/browser";

export type { KeyReplicas, MembersView, ValuePreview };
export type KeyPage = KeyBrowserPage;
export type HintQueueView = HintsView["migrations"];
export type ReplicaCopy = KeyReplicas["replicas"][number];
export type Identity = ManagementIdentity;
