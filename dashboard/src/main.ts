// Entry of the dashboard bundle: the style sheets and the app, rendered into #app.
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { html } from "htm/preact";
import { render } from "preact";
import { App } from "./app.js";

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(html`<${App} />`, root);
}
