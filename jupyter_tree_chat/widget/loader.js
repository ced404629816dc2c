// jupyter-tree-chat: the whole `_esm` of every panel and turn control (widget/loader.py).
// The front end's code is not here: the lab extension puts it on the page once
// (labextension/src/panel/registry.ts); where that is absent (VS Code, Colab, a lab with
// the extension disabled) the first view on the page asks its kernel for it and every
// other view on the page waits for that one answer.
const REGISTERED = Symbol.for("jupyter-tree-chat:widget");
const FETCHED = Symbol.for("jupyter-tree-chat:widget-fetched");
const PROTOCOL = 3;
const WAIT_MS = 120000;

function registered() {
  const entry = globalThis[REGISTERED];
  if (!entry || !entry.widget) return null;
  const speaks = Array.isArray(entry.protocols) ? entry.protocols : [entry.protocol];
  return speaks.includes(PROTOCOL) ? entry.widget : null;
}

function addStylesheet(css) {
  const id = "jupyter-tree-chat-widget-css";
  if (css && !document.getElementById(id)) {
    const style = Object.assign(document.createElement("style"), { id });
    style.textContent = css;
    document.head.appendChild(style);
  }
}

function fromKernel(model) {
  const asked = globalThis[FETCHED];
  if (asked) return asked;
  const answered = new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      model.off("msg:custom", onMessage);
    };
    const onMessage = (message) => {
      if (!message || message.t !== "code") return;
      stop();
      addStylesheet(message.css);
      const url = URL.createObjectURL(new Blob([message.js], { type: "text/javascript" }));
      import(/* webpackIgnore: true */ url)
        .then((module) => resolve(module.default))
        .catch(reject)
        .finally(() => URL.revokeObjectURL(url));
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error("jupyter-tree-chat: no kernel answered with the widget's code"));
    }, WAIT_MS);
    model.on("msg:custom", onMessage);
    model.send({ a: "code", protocol: PROTOCOL });
  });
  answered.catch(() => {
    if (globalThis[FETCHED] === answered) delete globalThis[FETCHED]; // the next view asks again
  });
  globalThis[FETCHED] = answered;
  return answered;
}

function widget(model) {
  const found = registered();
  return found ? Promise.resolve(found) : fromKernel(model);
}

// Models whose initialize waits for the code, by their `uid` (initialize and render get
// different proxies of one model). anywidget creates a model inside JupyterLab's chain of
// kernel messages, so initialize must not wait for a kernel message: it returns at once
// and the view waits instead.
const initializing = new Map();

export default {
  initialize({ model }) {
    const found = registered();
    if (found) return found.initialize({ model });
    const uid = model.get("uid");
    const ready = fromKernel(model).then((code) => code.initialize({ model }));
    ready.catch(() => {}); // said once, by the view
    initializing.set(uid, ready);
    return () => {
      if (initializing.get(uid) === ready) initializing.delete(uid);
      ready.then((cleanup) => typeof cleanup === "function" && cleanup(), () => {});
    };
  },
  async render({ model, el }) {
    try {
      const code = await widget(model);
      await initializing.get(model.get("uid"));
      return code.render({ model, el });
    } catch (error) {
      // no kernel answered (a page restored from saved state, its kernel gone): the
      // cell's Markdown answer and footer above still say everything
      console.warn(String(error));
      return () => {};
    }
  },
};
