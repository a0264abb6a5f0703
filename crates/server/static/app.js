// The chat page: one WebSocket to /ws (protocol in the README). The session id is kept in
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
        for (const turn of message.turns) showTurn(turn.explanation);
      }
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
      showTurn(message.explanation);
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

function showTurn(explanation) {
  const turn = el("li", "turn");
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
  if (explanation.truncated) {
    answer.append(el("p", "note", "Not every answer is shown: there were more than the configured limits keep (max_rows, max_result_bytes or max_stored_answers)."));
  }
  turn.append(answer);
  turn.append(details(explanation));
  $("dialogue").append(turn);
  turn.scrollIntoView({ block: "end" });
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
      list.append(el("li", "", "over the " + e.answer_set.members.length + " values of an earlier answer" +
        (e.answer_set.count ? ", counted" : "")));
    }
    section(panel, "What it refers to").append(list);
  }
  if (e.clarified) {
    section(panel, "Your choice").append(el("p", "", "\u201c" + e.clarified.mention + "\u201d \u2192 option " +
      (e.clarified.option + 1) + ", " + e.clarified.iri));
  }
  if (e.entities.length) {
    const list = el("ul", "");
    for (const link of e.entities) {
      list.append(el("li", "", link.mention + " → " + (link.iri || "not in the graph") + " (" + link.method + ")"));
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
      choice.reason === "class" ? "the shortest path reaching most of the class named" : "the only path that fits";
    box.append(el("p", "path chosen", chosen.text + " (" + why + ")"));
    const list = el("ol", "paths");
    for (const p of e.paths.slice(0, 5)) list.append(el("li", "", p.text + " — " + p.score.toFixed(2)));
    box.append(list);
    if (e.path_search && e.path_search.cut) box.append(el("p", "note", e.path_search.cut));
  }
  if (e.sparql.length) {
    const box = section(panel, "SPARQL");
    for (const query of e.sparql) {
      const note = query.reason + ", " + query.rows + " rows, " + query.elapsed_ms.toFixed(1) + " ms" +
        (query.used ? ", used" : "") + (query.error ? ", error: " + query.error : "");
      box.append(el("pre", "sparql", query.sparql));
      box.append(el("p", "note", note));
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
  .then(connect)
  .catch((error) => showError(String(error)));
