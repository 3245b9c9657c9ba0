// The labelling widget's front end (anywidget): draws the item the Python side chose, and sends
// one message per action. Python records it in the session and sets the next item.

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "bv-label";
  root.tabIndex = 0; // focusable, so that the keyboard shortcuts reach it
  el.appendChild(root);

  const part = (tag, name) => {
    const node = document.createElement(tag);
    node.className = `bv-${name}`;
    root.appendChild(node);
    return node;
  };
  const title = part("div", "title");
  const fields = part("table", "fields");
  const buttons = part("div", "buttons");
  const bar = part("progress", "progress");
  const counts = part("span", "counts");
  const estimate = part("div", "estimate");
  const message = part("div", "message");

  const send = (content) => model.send(content);
  const act = (type, extra = {}) => send({ type, item: model.get("item"), ...extra });

  function drawButtons() {
    buttons.replaceChildren();
    model.get("choices").forEach((choice, k) => {
      const b = document.createElement("button");
      b.className = "bv-choice";
      b.dataset.choice = String(k);
      b.textContent = `${choice.name} (${choice.key})`;
      b.addEventListener("click", () => act("answer", { choice: k }));
      buttons.appendChild(b);
    });
    for (const [type, text] of [["skip", "Skip (s)"], ["undo", "Undo (u)"]]) {
      const b = document.createElement("button");
      b.className = `bv-${type}`;
      b.textContent = text;
      b.addEventListener("click", () => act(type));
      buttons.appendChild(b);
    }
  }

  function drawItem() {
    const done = model.get("done");
    title.textContent = done ? "Done: nothing left to label." : model.get("title");
    fields.replaceChildren();
    for (const [name, value, kind] of model.get("fields")) {
      const row = fields.insertRow();
      row.insertCell().textContent = name;
      const cell = row.insertCell();
      cell.className = "bv-value";
      if (kind === "image") {
        const img = document.createElement("img");
        img.src = value;
        img.alt = value;
        cell.appendChild(img);
      } else {
        cell.textContent = value;
      }
    }
    for (const b of buttons.querySelectorAll("button")) {
      b.disabled = done && !b.classList.contains("bv-undo");
    }
  }

  function drawProgress() {
    const p = model.get("progress");
    const budget = p.budget ?? null;
    if (budget) {
      bar.max = budget;
      bar.value = Math.min(p.labels, budget);
    } else {
      bar.removeAttribute("value"); // no budget: an indeterminate bar
    }
    const of = budget ? ` of ${budget}` : "";
    counts.textContent = `${p.labels}${of} labels, ${p.pending} pending`;
    estimate.textContent = model.get("estimate");
  }

  root.addEventListener("keydown", (event) => {
    const key = event.key.toLowerCase();
    const k = model.get("choices").findIndex((c) => c.key === key);
    if (k >= 0) act("answer", { choice: k });
    else if (key === "s") act("skip");
    else if (key === "u") act("undo");
    else return;
    event.preventDefault();
  });

  drawButtons();
  drawItem();
  drawProgress();
  message.textContent = model.get("message");
  model.on("change:choices", drawButtons);
  model.on("change:item", drawItem);
  model.on("change:fields", drawItem);
  model.on("change:title", drawItem);
  model.on("change:done", drawItem);
  model.on("change:progress", drawProgress);
  model.on("change:estimate", drawProgress);
  model.on("change:message", () => { message.textContent = model.get("message"); });
  root.focus();
}

export default { render };
