// <next-token-playground> : one tag for a lesson page. It builds an iframe of
// the playground in embed mode with the attributes as URL parameters, e.g.
//   <script type="module" src="https://host/playground/embed.js"></script>
//   <next-token-playground model="logits10" temperature="0.5" panels="dist,rules,entropy">
//   </next-token-playground>
// or two configurations compared (the compare panel's sides):
//   <next-token-playground model="smollm2-135m" panels="dist,compare" a="llama_cpp:" b='hf:{"do_sample":true}'>
// Any attribute the page understands (see state/url.js) is passed through.

const PAGE = new URL("./index.html", import.meta.url);

/** Attributes that are the element's own, not URL parameters. */
const OWN = new Set(["width", "height", "title", "class", "style", "id"]);

class NextTokenPlayground extends HTMLElement {
  static get observedAttributes() {
    return ["model", "prompt", "panels", "temperature", "top_k", "top_p", "min_p", "seed", "steps", "chat", "a", "b", "width", "height"];
  }

  connectedCallback() { this.build(); }

  attributeChangedCallback() { if (this.isConnected) this.build(); }

  /** (Re)build the iframe from the current attributes. */
  build() {
    const url = new URL(PAGE);
    url.searchParams.set("embed", "1");
    for (const { name, value } of this.attributes) {
      if (!OWN.has(name)) url.searchParams.set(name, value);
    }
    let frame = this.querySelector("iframe");
    if (!frame) {
      frame = document.createElement("iframe");
      frame.style.border = "0";
      frame.loading = "lazy";
      this.append(frame);
    }
    frame.title = this.getAttribute("title") || "Next-token playground";
    frame.width = this.getAttribute("width") || "720";
    frame.height = this.getAttribute("height") || "640";
    if (frame.src !== url.href) frame.src = url.href;
  }
}

if (!customElements.get("next-token-playground")) customElements.define("next-token-playground", NextTokenPlayground);
