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
try {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(String(error)));
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
  await page.goto(url);
  await page.locator("#connection", { hasText: "connected" }).waitFor({ timeout: 15000 });
  assert.equal(await page.locator("#kg").inputValue(), "default");

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

  // A follow-up with a pronoun.
  await page.fill("#question", "What else did he direct?");
  await page.click("#ask");
  const second = page.locator("#dialogue > li").nth(1);
  await second.locator(".answer .text").waitFor({ timeout: 30000 });
  const films = await second.locator(".answer .text").textContent();
  assert.match(films, /Cast Away/);
  await second.locator("summary").click();
  assert.match(await second.locator("details").textContent(), /What else did Robert Zemeckis direct\?/);
  assert.match(await second.locator(".referents").textContent(), /“he” → Robert Zemeckis \(the one that fits\)/);

  // A reload resumes the same session, with both turns.
  await page.reload();
  await page.locator("#dialogue > li").nth(1).waitFor({ timeout: 15000 });
  assert.equal(await page.locator("#dialogue > li").count(), 2);

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
  assert.deepEqual(problems, []);
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
  console.log("web page test passed");
} finally {
  await browser.close();
}
