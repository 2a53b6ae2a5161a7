export { createClientApp, createClientListener, createClientRouter, type ClientAppDeps, type ClientListener } from "./client-app.js";
export { createManagementApp, createManagementRouter, type ManagementAppDeps } from "./management-app.js";
export { ITEM_ROUTES } from "./item-routes.js";
export { ClientBytesBudget } from "./client-bytes-budget.js";
export { writeError } from "./respond.js";
export { ClusterEventsPublisher, subscribeEvents, HEARTBEAT_FRAME_INTERVAL_MS } from "./cluster-events.js";
export { membersBody } from "./members-body.js";
export { readDashboardAssets, type DashboardAssets } from "./dashboard-assets.js";
export { hostAllowListOf, rebindingGuard } from "./rebinding-guard.js";
