// The chat page: one WebSocket to /ws (protocol in docs/server.md). The session id is kept in
// localStorage so a reload (or a server restart) resumes the same dialogue. Everything the
// server sends is put on the page with textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const STAGE_TEXT = {
  translated: "translated the question",
  classified: "classified the question",
  rephrased: "rephrased it on its own",
  qir_built: "built the question's structure (QIR)",
  entities_linked: "linked entities",
  relations_linked: "linked relations",
  paths_ranked: "ranked the relation paths",
  queries_selected: "selected SPARQL queries",
  executed: "ran the queries",
};

let socket = null;
let session = localStorage.getItem("chatty-kg-session");
let apiKey = localStorage.getItem("chatty-kg-key") || "";
let pending = [];        // messages waiting for the socket to open
let busy = false;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function headers() {
  return apiKey ? { Authorization: "Bearer " + apiKey } : {};
}

async function askForKey() {
  const dialog = $("key-dialog");
  dialog.showModal();
  await new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
  apiKey = $("key-input").value.trim();
  localStorage.setItem("chatty-kg-key", apiKey);
}

async function loadKgs() {
  let response = await fetch("/api/kgs", { headers: headers() });
  if (response.status === 401) {
    await askForKey();
    response = await fetch("/api/kgs", { headers: headers() });
  }
  if (!response.ok) throw new Error("cannot list knowledge graphs: HTTP " + response.status);
  const select = $("kg");
  select.replaceChildren();
  for (const kg of await response.json()) {
    const option = el("option", "", kg.name + " (" + kg.backend + ")");
    option.value = kg.name;
    option.selected = kg.default;
    select.append(option);
  }
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const query = apiKey ? "?api_key=" + encodeURIComponent(apiKey) : "";
  socket = new WebSocket(scheme + "//" + location.host + "/ws" + query);
  setConnection("connecting…");
  socket.addEventListener("open", () => {
    setConnection("connected");
    if (session) socket.send(JSON.stringify({ type: "resume", session }));
    for (const message of pending.splice(0)) socket.send(message);
  });
  socket.addEventListener("message", (event) => receive(JSON.parse(event.data)));
  socket.addEventListener("close", (event) => {
    setConnection("disconnected" + (event.reason ? ": " + event.reason : ""));
    socket = null;
    if (busy) {
      setBusy(false);
      showError("The connection closed before the answer came. Ask again; your conversation is kept.");
    }
  });
}

function send(message) {
  const text = JSON.stringify(message);
  if (socket && socket.readyState === WebSocket.OPEN) {
    socket.send(text);
  } else {
    pending.push(text);
    if (!socket) connect();
  }
}

function setConnection(text) {
  $("connection").textContent = text;
}

function setBusy(value) {
  busy = value;
  $("ask").disabled = value;
  $("progress").hidden = !value;
  if (value) $("stages").replaceChildren();
}

function showError(text) {
  const error = $("error");
  error.textContent = text;
  error.hidden = !text;
}

function receive(message) {
  switch (message.type) {
    case "session":
      session = message.session;
      localStorage.setItem("chatty-kg-session", session);
      $("kg").value = message.kg;
      if (!message.created) {
        $("dialogue").replaceChildren();
        for (const turn of message.turns) showTurn(turn.explanation, turn.index, turn.feedback);
      }
      showSuggestions(message.kg);
      break;
    case "stage": {
      const item = el("li", "stage", STAGE_TEXT[message.stage] || message.stage);
      item.dataset.stage = message.stage;
      item.append(el("span", "ms", " " + Math.round(message.elapsed_ms) + " ms"));
      $("stages").append(item);
      break;
    }
    case "answer":
      setBusy(false);
      showTurn(message.explanation, message.turn, null);
      break;
    case "feedback":
      showRating(message.turn, message.feedback);
      break;
    case "error":
      if (message.kind === "no_such_session") {
        // Expired or deleted: start afresh on the next question.
        session = null;
        localStorage.removeItem("chatty-kg-session");
      }
      setBusy(false);
      showError(message.message);
      break;
  }
}

function showTurn(explanation, index, feedback) {
  $("suggestions").hidden = true;
  const turn = el("li", "turn");
  turn.dataset.turn = String(index);
  turn.append(el("p", "question", explanation.question));
  const answer = el("div", "answer");
  answer.dataset.outcome = explanation.outcome.status;
  const clarification = explanation.outcome.status === "clarify" ? explanation.outcome.clarification : null;
  // A clarifying question's numbered options become buttons below it.
  const text = clarification ? explanation.text.split("\n").filter((line) => !/^\d+\. /.test(line)).join("\n")
    : explanation.text;
  answer.append(el("p", "text", text));
  if (clarification) {
    // Which one is meant: a button per option sends its number, as typing it would.
    const choices = el("div", "choices");
    clarification.options.forEach((option, i) => {
      const button = el("button", "choice", (i + 1) + ". " + option.label + " (" + option.description + ")");
      button.type = "button";
      button.dataset.option = String(i + 1);
      button.addEventListener("click", () => askQuestion(String(i + 1)));
      choices.append(button);
    });
    answer.append(choices);
  }
  const entities = explanation.answers.filter((a) => a.kind === "iri");
  if (entities.length && !clarification) answer.append(valueLinks(entities, turn));
  if (explanation.truncated) {
    answer.append(el("p", "note", "Not every answer is shown: there were more than the configured limits keep (max_rows, max_result_bytes or max_stored_answers)."));
  }
  const picture = triplesPicture(explanation);
  if (picture) answer.append(picture);
  turn.append(answer);
  // A clarifying question is not rated: the answer after the choice is.
  if (Number.isInteger(index) && !clarification) turn.append(ratingBar(index, feedback));
  turn.append(details(explanation));
  $("dialogue").append(turn);
  turn.scrollIntoView({ block: "end" });
}

// ----- answers as links, and what the graph says of each -----

// An IRI as a link target only when it is a web address: an IRI may be any scheme, and
// `javascript:` must never become an href (the CSP would block it; this does not rely on it).
function safeHref(iri) {
  return /^https?:\/\//i.test(iri) ? iri : "#";
}

function valueLinks(values, turn) {
  const list = el("ul", "values");
  for (const value of values.slice(0, 50)) {
    const item = el("li", "");
    const link = el("a", "value", value.label || value.value);
    link.href = safeHref(value.value);
    link.title = value.value;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      showEntity(turn, value.value);
    });
    item.append(link);
    list.append(item);
  }
  return list;
}

async function showEntity(turn, iri) {
  let card = turn.querySelector(".entity");
  if (!card) {
    card = el("section", "entity");
    turn.querySelector(".answer").append(card);
  }
  card.replaceChildren(el("p", "note", "Looking up " + iri + "…"));
  const kg = encodeURIComponent($("kg").value);
  const response = await fetch("/api/kgs/" + kg + "/describe?limit=25&iri=" + encodeURIComponent(iri), { headers: headers() });
  const body = await response.json();
  if (!response.ok) {
    card.replaceChildren(el("p", "error", body.error ? body.error.message : "HTTP " + response.status));
    return;
  }
  const title = el("h3", "", body.label || iri);
  const close = el("button", "close", "×");
  close.type = "button";
  close.setAttribute("aria-label", "close");
  close.addEventListener("click", () => card.remove());
  title.append(close);
  const facts = el("ul", "facts");
  for (const t of body.triples) {
    const row = el("li", "fact");
    const other = t.other.iri ? el("a", "value", t.other.label || t.other.iri) : el("span", "literal", t.other.value ?? "");
    if (t.other.iri) {
      other.href = safeHref(t.other.iri);
      other.title = t.other.iri;
      other.addEventListener("click", (event) => {
        event.preventDefault();
        showEntity(turn, t.other.iri);
      });
    }
    if (t.direction === "outgoing") {
      row.append(el("span", "predicate", t.predicate.label + ": "), other);
    } else {
      row.append(other, el("span", "predicate", " " + t.predicate.label + " this"));
    }
    facts.append(row);
  }
  if (!body.triples.length) facts.append(el("li", "note", "The graph has no triples about it."));
  card.replaceChildren(title, el("p", "iri", iri), facts);
}

// ----- the triples behind the answer, drawn -----

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function localName(iri) {
  const raw = iri.replace(/[/#]+$/, "").split(/[/#:]/).pop() || iri;
  let name = raw;
  try {
    name = decodeURIComponent(raw);
  } catch (error) {
    // Not UTF-8 escapes (or a stray "%"): shown as written.
  }
  return name.replace(/_/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

function shorten(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

// A picture of the provenance triples of the first answers: vertices in columns by distance from
// the question's entities, edges named by their predicates.
function triplesPicture(e) {
  const triples = [];
  const seen = new Set();
  for (const answer of e.answers.slice(0, 6)) {
    for (const t of answer.provenance || []) {
      const key = t.join("\u0000");
      if (!seen.has(key)) {
        seen.add(key);
        triples.push(t);
      }
    }
  }
  if (!triples.length || triples.length > 24) return null;
  const names = new Map();
  for (const link of e.entities) if (link.iri) names.set(link.iri, link.label || link.mention);
  for (const a of e.answers) names.set(a.value, a.label || a.value);
  const nodes = new Map();
  const node = (id) => {
    if (!nodes.has(id)) nodes.set(id, { id, depth: null, row: 0 });
    return nodes.get(id);
  };
  for (const [s, , o] of triples) {
    node(s);
    node(o);
  }
  // Depth: 0 for vertices nothing points to, then one more per edge followed.
  const targets = new Set(triples.map((t) => t[2]));
  let frontier = [...nodes.values()].filter((n) => !targets.has(n.id));
  if (!frontier.length) frontier = [nodes.values().next().value];
  for (const n of frontier) n.depth = 0;
  while (frontier.length) {
    const next = [];
    for (const n of frontier) {
      for (const [s, , o] of triples) {
        if (s === n.id && nodes.get(o).depth === null) {
          nodes.get(o).depth = n.depth + 1;
          next.push(nodes.get(o));
        }
      }
    }
    frontier = next;
  }
  const columns = [];
  for (const n of nodes.values()) {
    n.depth ??= 0;
    (columns[n.depth] ||= []).push(n);
  }
  const [width, height, gap, rowGap] = [150, 26, 110, 14];
  columns.forEach((column) => column.forEach((n, i) => { n.row = i; }));
  const rows = Math.max(...columns.map((c) => c.length));
  const total = { w: columns.length * width + (columns.length - 1) * gap + 2, h: rows * (height + rowGap) + 2 };
  const at = (n) => ({ x: 1 + n.depth * (width + gap), y: 1 + n.row * (height + rowGap) + ((rows - columns[n.depth].length) * (height + rowGap)) / 2 });
  const picture = svg("svg", { class: "triples", viewBox: "0 0 " + total.w + " " + total.h, width: total.w, height: total.h, role: "img" });
  picture.append(svg("title", {}, "The triples behind the answer"));
  const defs = svg("defs", {});
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#8a93a6" }));
  defs.append(marker);
  picture.append(defs);
  for (const [s, p, o] of triples) {
    const [a, b] = [at(nodes.get(s)), at(nodes.get(o))];
    const [x1, y1, x2, y2] = [a.x + width, a.y + height / 2, b.x, b.y + height / 2];
    const edge = svg("g", { class: "edge" });
    edge.append(svg("line", { x1, y1, x2, y2, stroke: "#8a93a6", "marker-end": "url(#arrow)" }));
    edge.append(svg("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, "text-anchor": "middle", class: "predicate" }, shorten(localName(p), 18)));
    picture.append(edge);
  }
  const answers = new Set(e.answers.map((a) => a.value));
  for (const n of nodes.values()) {
    const { x, y } = at(n);
    const group = svg("g", { class: "vertex" + (answers.has(n.id) ? " answer" : "") });
    group.append(svg("rect", { x, y, width, height, rx: 6 }));
    const name = names.get(n.id) || (/^[a-z][a-z0-9+.-]*:/i.test(n.id) ? localName(n.id) : n.id);
    group.append(svg("text", { x: x + width / 2, y: y + height / 2 + 4, "text-anchor": "middle" }, shorten(name, 22)));
    group.append(svg("title", {}, n.id));
    picture.append(group);
  }
  const box = el("figure", "picture");
  box.append(picture);
  return box;
}

// ----- ratings -----

function ratingBar(index, feedback) {
  const bar = el("div", "rating");
  const up = el("button", "rate up", "✓ Right");
  const down = el("button", "rate down", "✗ Wrong");
  up.type = down.type = "button";
  up.setAttribute("aria-label", "right answer");
  down.setAttribute("aria-label", "wrong answer");
  up.addEventListener("click", () => send({ type: "feedback", turn: index, rating: "up" }));
  const form = el("form", "correction");
  form.hidden = true;
  const input = el("input", "");
  input.type = "text";
  input.placeholder = "What is the right answer? (optional; several: separate with ;)";
  input.setAttribute("aria-label", "right answer");
  input.maxLength = 1000;
  const submit = el("button", "", "Send");
  form.append(input, submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const answer = input.value.trim();
    const message = { type: "feedback", turn: index, rating: "down" };
    if (answer) message.correction = { answer };
    send(message);
    form.hidden = true;
  });
  down.addEventListener("click", () => {
    form.hidden = false;
    input.focus();
  });
  bar.append(up, down, el("span", "thanks", ""), form);
  if (feedback) showRatingIn(bar, feedback);
  return bar;
}

function showRating(index, feedback) {
  const turn = document.querySelector('#dialogue > li[data-turn="' + index + '"]');
  if (turn) showRatingIn(turn.querySelector(".rating"), feedback);
}

function showRatingIn(bar, feedback) {
  bar.dataset.rating = feedback ? feedback.rating : "";
  let text = "";
  if (feedback && feedback.correction) {
    const c = feedback.correction;
    const right = c.boolean !== undefined && c.boolean !== null ? (c.boolean ? "yes" : "no")
      : (c.answers || []).map((a) => a.label).join(", ");
    text = "Thanks: noted that the answer should be " + right + ".";
  } else if (feedback) {
    text = feedback.rating === "up" ? "Thanks: noted as right." : "Thanks: noted as wrong.";
  }
  bar.querySelector(".thanks").textContent = text;
}

// ----- suggested first questions -----

async function showSuggestions(kg) {
  const box = $("suggestions");
  if ($("dialogue").children.length) {
    box.hidden = true;
    return;
  }
  const response = await fetch("/api/kgs/" + encodeURIComponent(kg) + "/suggestions", { headers: headers() });
  if (!response.ok || $("dialogue").children.length) return;
  const list = $("suggestion-list");
  list.replaceChildren();
  for (const suggestion of await response.json()) {
    const button = el("button", "suggestion", suggestion.question);
    button.type = "button";
    button.title = suggestion.entity + " — " + suggestion.predicate;
    button.addEventListener("click", () => askQuestion(suggestion.question));
    list.append(button);
  }
  box.hidden = !list.children.length;
}

function section(parent, title) {
  const box = el("section", "");
  box.append(el("h3", "", title));
  parent.append(box);
  return box;
}

function details(e) {
  const panel = el("details", "how");
  panel.append(el("summary", "", "How I got this"));
  if (e.resolved_question && e.resolved_question !== e.question) {
    section(panel, "Question on its own").append(el("p", "", e.resolved_question));
  }
  if (e.resolution && e.resolution.references.length) {
    const list = el("ul", "referents");
    for (const r of e.resolution.references) {
      const chosen = r.chosen ? r.chosen.label : "nothing fits: left as written";
      const how = { only: "the one that fits", model: "chosen by the model", relaxed: "the one entity it can stand for",
        unresolved: "" }[r.method] || r.method;
      const among = r.fitting.length > 1 ? " among " + r.fitting.map((c) => c.label).join(", ") : "";
      list.append(el("li", "", "“" + r.reference.text + "” → " + chosen + (how ? " (" + how + among + ")" : "")));
    }
    if (e.answer_set) {
      const set = e.answer_set;
      const of = set.of_question ? "the answer to \u201c" + set.of_question + "\u201d (an earlier question with another entity)" :
        set.turn ? "the answer of turn " + set.turn : "an earlier answer";
      const operation = set.count ? "counted the" : set.role && set.role.as === "anchor" ? "asked of each of the" : "restricted to the";
      list.append(el("li", "", operation + " " + set.members.length + " values of " + of));
    }
    section(panel, "What it refers to").append(list);
  }
  if (e.excluded && e.excluded.length) {
    section(panel, "Left out").append(el("p", "", "\u201celse\u201d: what the previous turn named, " + e.excluded.map((m) => m.label).join(", ")));
  }
  if (e.clarified) {
    section(panel, "Your choice").append(el("p", "", "\u201c" + e.clarified.mention + "\u201d \u2192 option " +
      (e.clarified.option + 1) + ", " + e.clarified.iri));
  }
  if (e.entities.length) {
    const list = el("ul", "");
    for (const link of e.entities) {
      const words = link.read_as_words ? "; read as words of the relation: no path joined it with the other mention" : "";
      list.append(el("li", "", link.mention + " → " + (link.iri || "not in the graph") + " (" + link.method + words + ")"));
    }
    section(panel, "Entities").append(list);
  }
  if (e.class) {
    const role = e.class.role === "membership" ? "asked whether the entity is one" : "what the answers must be";
    const held = e.class.applied ? "" : " (not applied: no path reached its instances)";
    section(panel, "Class").append(el("p", "", "\u201c" + e.class.mention + "\u201d \u2192 " + e.class.label +
      " <" + e.class.iri + ">, " + role + held));
  }
  if (e.relations.length) {
    const list = el("ul", "");
    for (const relation of e.relations) {
      const best = relation.predicates.slice(0, 3).map((p) => p.label + " " + p.score.toFixed(2));
      list.append(el("li", "", relation.phrase + " → " + best.join(", ")));
    }
    section(panel, "Relations").append(list);
  }
  if (e.paths && e.paths.length) {
    const box = section(panel, "Relation path");
    const choice = e.path_choice;
    const chosen = choice ? e.paths[choice.index] : e.paths[0];
    const why = !choice ? "" : choice.reason === "model" ? "picked by the model (small margin)" :
      choice.reason === "margin" ? "best by a margin of " + choice.margin.toFixed(2) :
      choice.reason === "class" ? "of the paths the words tell no more apart, the shortest reaching most of the class named" :
      choice.reason === "several" ? "'how many' or a plural wants several: the tied path that reaches several values" :
      "the only path that fits";
    box.append(el("p", "path chosen", chosen.text + " (" + why + ")"));
    const list = el("ol", "paths");
    for (const p of e.paths.slice(0, 5)) list.append(el("li", "", p.text + " — " + p.score.toFixed(2)));
    box.append(list);
    if (e.path_search && e.path_search.cut) box.append(el("p", "note", e.path_search.cut));
    const only = e.path_search && e.path_search.only_relation;
    if (only) box.append(el("p", "note", "No relation's name fits the words: " + ({
      to_the_class: "the only relation to the class asked for",
      to_a_time: "the only relation to something with a date",
      to_things: "the only relation to other things",
    }[only] || only) + "."));
    const counted = (e.path_search && e.path_search.class_queries) || [];
    if (counted.length) {
      const slowest = Math.max(...counted.map((q) => q.elapsed_ms));
      const late = counted.filter((q) => q.timed_out).length;
      const details = el("details", "class-queries");
      details.append(el("summary", "", counted.length + " class " + (counted.length === 1 ? "query" : "queries") +
        " ordered the paths (slowest " + slowest.toFixed(0) + " ms" + (late ? ", " + late + " timed out" : "") + ")"));
      for (const q of counted) {
        details.append(el("pre", "sparql", q.sparql));
        details.append(el("p", "note", q.rows + " rows, " + q.elapsed_ms.toFixed(1) + " ms" + (q.timed_out ? ", timed out" : "")));
      }
      box.append(details);
    }
  }
  if (e.example) {
    const x = e.example;
    const box = section(panel, "Example from feedback");
    const how = !x.fits ? "not tried: this question does not say " +
        x.words.filter((w) => w.question < w.example - 0.1).map((w) => "\"" + w.name + "\"").join(", ") :
      x.answered ? "its query answered on this question's " + (x.anchors.length === 1 ? "vertex" : "vertices") :
      "tried, no answer here";
    box.append(el("p", "", "\u201c" + x.question + "\u201d (similarity " + x.similarity.toFixed(2) + "): " + how));
  }
  if (e.sparql.length) {
    const box = section(panel, "SPARQL");
    for (const query of e.sparql) {
      const note = query.reason + ", " + query.rows + " rows, " + query.elapsed_ms.toFixed(1) + " ms" +
        (query.used ? ", used" : "") + (query.error ? ", error: " + query.error : "");
      box.append(el("pre", "sparql", query.sparql));
      const copy = el("button", "copy", "Copy");
      copy.type = "button";
      copy.addEventListener("click", () => copyText(query.sparql, copy));
      box.append(copy);
      box.append(el("p", "note", note));
      if (query.attribute) {
        const a = query.attribute;
        box.append(el("p", "note", (a.of === "superlative" ? "Ordered by " : "Held to the value by ") +
          "\u201c" + a.label + "\u201d: most like \u201c" + a.words + "\u201d (" + a.similarity.toFixed(2) +
          ") of " + a.compared + " number or date attributes"));
      }
    }
  }
  const t = e.timings;
  const timing = "understanding " + t.understanding_ms.toFixed(0) + " ms · linking " + t.linking_ms.toFixed(0) +
    " ms · query selection " + t.query_selection_ms.toFixed(0) + " ms · execution " + t.execution_ms.toFixed(0) +
    " ms · reply " + t.reply_ms.toFixed(0) + " ms · total " + t.total_ms.toFixed(0) + " ms";
  section(panel, "Timings").append(el("p", "", timing));
  section(panel, "Model").append(el("p", "", e.llm.calls + " LLM calls, " + e.llm.input_tokens +
    " tokens in, " + e.llm.output_tokens + " out"));
  return panel;
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch (error) {
    button.textContent = "Copy failed: select the query";
  }
  setTimeout(() => { button.textContent = "Copy"; }, 2000);
}

function askQuestion(question) {
  if (!question || busy) return;
  showError("");
  setBusy(true);
  if (!session) send({ type: "open", kg: $("kg").value || null });
  send({ type: "ask", question });
}

$("ask-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question || busy) return;
  askQuestion(question);
  $("question").value = "";
});

$("new-session").addEventListener("click", () => {
  session = null;
  localStorage.removeItem("chatty-kg-session");
  $("dialogue").replaceChildren();
  showError("");
  send({ type: "open", kg: $("kg").value || null });
});

$("kg").addEventListener("change", () => $("new-session").click());

loadKgs()
  .then(() => {
    connect();
    if (!session) showSuggestions($("kg").value);
  })
  .catch((error) => showError(String(error)));
