// Drives the chat page of a running `chatty-kg serve` (CHATTY_KG_URL) in Debian's headless
// Chromium (CHROMIUM) with Playwright. Run by tests/server.rs; exits non-zero on any failure.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";

const url = process.env.CHATTY_KG_URL;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
// Screenshots of each step go to SCREENSHOTS (a directory: the test's artefacts).
const shots = process.env.SCREENSHOTS;
const shot = async (page, name) => {
  if (shots) await page.screenshot({ path: shots + "/" + name + ".png", fullPage: true });
};
try {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(String(error)));
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
  await page.goto(url);
  await page.locator("#connection", { hasText: "connected" }).waitFor({ timeout: 15000 });
  assert.equal(await page.locator("#kg").inputValue(), "default");

  // First questions made from this graph: its predicates, its entities.
  const suggestions = page.locator("#suggestion-list .suggestion");
  await suggestions.first().waitFor({ timeout: 15000 });
  const suggested = await suggestions.allTextContents();
  assert.ok(suggested.length >= 2, String(suggested));
  for (const question of suggested) assert.match(question, /^(What (is|are) the .+ of .+|Who was .+ by|What is .+ (of|in)|When was .+ [a-z]+ed)\?$/);
  const facts = await suggestions.evaluateAll((buttons) => buttons.map((b) => b.title));
  for (const fact of facts) assert.match(fact, /^http:\/\/example\.org\/entity\/\S+ — http:\/\/example\.org\/relation\/\S+$/);
  await shot(page, "1-suggestions");

  // First question: the answer, the stages seen while it worked, and the SPARQL behind it.
  await page.fill("#question", "Who directed Forrest Gump?");
  await page.click("#ask");
  const first = page.locator("#dialogue > li").nth(0);
  await first.locator(".answer .text").waitFor({ timeout: 30000 });
  assert.equal(await first.locator(".question").textContent(), "Who directed Forrest Gump?");
  assert.equal(await first.locator(".answer .text").textContent(), "Robert Zemeckis");
  const stages = await page.locator("#stages li").evaluateAll((items) => items.map((i) => i.dataset.stage));
  assert.deepEqual(stages, ["classified", "qir_built", "entities_linked", "relations_linked", "paths_ranked", "queries_selected", "executed"]);
  assert.equal(await page.locator("#progress").isVisible(), false, "progress goes away with the answer");
  assert.equal(await first.locator(".sparql").first().isVisible(), false, "the panel starts closed");
  await first.locator("summary").click();
  const sparql = await first.locator(".sparql").first().textContent();
  assert.match(sparql, /directedBy/);
  assert.match(await first.locator("details").textContent(), /Forrest Gump → http:\/\/example\.org\/entity\/Forrest_Gump/);
  assert.match(await first.locator(".path.chosen").textContent(), /^Forrest Gump → directed by \(best by a margin/);
  assert.equal(await page.locator("#suggestions").isVisible(), false, "suggestions go once the dialogue starts");

  // The SPARQL copies to the clipboard.
  await first.locator("button.copy").first().click();
  await first.locator("button.copy", { hasText: "Copied" }).first().waitFor({ timeout: 5000 });
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), sparql);

  // The triples behind the answer, drawn: the film, the predicate, the director.
  const picture = first.locator("svg.triples");
  assert.ok(await picture.isVisible());
  const drawn = await picture.locator("text").allTextContents();
  assert.ok(drawn.includes("Forrest Gump") && drawn.includes("Robert Zemeckis"), String(drawn));
  assert.ok(drawn.some((t) => /directed by/.test(t)), String(drawn));
  assert.equal(await picture.locator("g.vertex.answer text").textContent(), "Robert Zemeckis");

  // The answer is a link: a click shows what the graph says of it, and its neighbours are links too.
  const link = first.locator(".values a.value");
  assert.equal(await link.textContent(), "Robert Zemeckis");
  await link.click();
  const card = first.locator(".entity");
  await card.locator(".facts").waitFor({ timeout: 15000 });
  assert.match(await card.locator("h3").textContent(), /^Robert Zemeckis/);
  assert.match(await card.locator(".facts").textContent(), /Forrest Gump directed by this/);
  await card.locator(".fact a.value", { hasText: "Forrest Gump" }).first().click();
  await card.locator("h3", { hasText: "Forrest Gump" }).waitFor({ timeout: 15000 });
  assert.match(await card.locator(".facts").textContent(), /directed by: Robert Zemeckis/);

  // Ratings: right, and (on the next answer) wrong with the right answer, found in the graph.
  await first.locator(".rate.up").click();
  await first.locator(".rating[data-rating=up]").waitFor({ timeout: 15000 });
  assert.equal(await first.locator(".thanks").textContent(), "Thanks: noted as right.");
  await shot(page, "2-answer-picture-entity-rating");

  // A follow-up with a pronoun.
  await page.fill("#question", "What else did he direct?");
  await page.click("#ask");
  const second = page.locator("#dialogue > li").nth(1);
  await second.locator(".answer .text").waitFor({ timeout: 30000 });
  const films = await second.locator(".answer .text").textContent();
  assert.match(films, /Cast Away/);
  assert.doesNotMatch(films, /Forrest Gump/);
  await second.locator("summary").click();
  assert.match(await second.locator("details").textContent(), /What else did Robert Zemeckis direct\?/);
  assert.match(await second.locator(".referents").textContent(), /“he” → Robert Zemeckis \(the one that fits\)/);
  assert.match(await second.locator("details").textContent(), /“else”: what the previous turn named, Forrest Gump/);
  await second.locator(".rate.down").click();
  await second.locator("form.correction input").fill("Cast Away; Back to the Future");
  await second.locator("form.correction button").click();
  await second.locator(".rating[data-rating=down]").waitFor({ timeout: 15000 });
  assert.equal(await second.locator(".thanks").textContent(),
    "Thanks: noted that the answer should be Cast Away, Back to the Future.");
  const exported = await page.evaluate(async () => (await fetch("/api/feedback")).json());
  assert.equal(exported.questions.length, 2);
  assert.deepEqual(exported.questions[1].answers[0].results.bindings.map((b) => b.answer.type), ["uri", "literal"]);

  // A reload resumes the same session, with both turns.
  await page.reload();
  await page.locator("#dialogue > li").nth(1).waitFor({ timeout: 15000 });
  assert.equal(await page.locator("#dialogue > li").count(), 2);
  assert.equal(await page.locator("#dialogue > li").nth(0).locator(".rating").getAttribute("data-rating"), "up",
    "a rating is kept with its turn");

  // An entity the graph lacks: said plainly, nothing invented.
  await page.fill("#question", "Who directed Titanic 2?");
  await page.click("#ask");
  const third = page.locator("#dialogue > li").nth(2);
  await third.locator(".answer").waitFor({ timeout: 30000 });
  assert.equal(await third.locator(".answer").getAttribute("data-outcome"), "unknown_entity");
  assert.match(await third.locator(".answer .text").textContent(), /Titanic 2/);

  // Another graph, where "Crash" names two films: the page asks which one, with a button each,
  // and a click answers for that one.
  await page.selectOption("#kg", "homonyms");
  await page.locator("#dialogue > li").first().waitFor({ state: "detached", timeout: 15000 });
  await page.fill("#question", "Who directed Crash?");
  await page.click("#ask");
  const asked = page.locator("#dialogue > li").nth(0);
  await asked.locator(".answer").waitFor({ timeout: 30000 });
  assert.equal(await asked.locator(".answer").getAttribute("data-outcome"), "clarify");
  assert.match(await asked.locator(".answer .text").textContent(), /Which one do you mean\?$/);
  const choices = asked.locator(".choice");
  assert.equal(await choices.count(), 2);
  const label = await choices.nth(1).textContent();
  assert.match(label, /^2\. Crash \(film; /);
  await choices.nth(1).click();
  const chosen = page.locator("#dialogue > li").nth(1);
  await chosen.locator(".answer .text").waitFor({ timeout: 30000 });
  assert.equal(await chosen.locator(".question").textContent(), "2");
  const director = /1996/.test(label) ? "David Cronenberg" : "Paul Haggis";
  assert.equal(await chosen.locator(".answer .text").textContent(), director);
  await chosen.locator("summary").click();
  assert.match(await chosen.locator("details").textContent(), /Your choice/);
  await shot(page, "3-clarified");
  assert.deepEqual(problems, []);
  console.log("web page test passed");
} finally {
  await browser.close();
}
