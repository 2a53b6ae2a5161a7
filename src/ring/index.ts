export { HashRing, type Owners } from "./hash-ring.js";
