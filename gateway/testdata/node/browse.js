'use strict';

// Drives headless Chromium through playwright-core for the gateway's
// browser tests.
//
// Usage: node browse.js < SPEC
//
// SPEC is one JSON object on stdin:
//
//   {"executable": "/usr/bin/chromium",
//    "pages": [{"url": "http://127.0.0.1:8080/",
//               "javaScriptEnabled": true,
//               "username": "", "password": "",
//               "screenshot": "/abs/path.png",
//               "width": 1400, "height": 1000,
//               "click": "css selector", "hover": "css selector",
//               "extract": {"name": "css selector"},
//               "attrs": {"name": {"selector": "css selector", "attribute": "href"}}}]}
//
// Each page gets a browser context of its own, so no cookie, cache entry
// or credential of one page reaches the next. The script loads the URL,
// clicks and hovers what it names, in that order, then reads the title,
// the trimmed text content of every match of each extract selector and
// the attribute of every match of each attrs selector (null where a match
// lacks it), and takes a full-page screenshot if asked. It prints one JSON
// object on stdout:
//
//   {"version": "148.0.7778.167",
//    "pages": [{"status": 200, "title": "...", "extract": {"name": ["..."]},
//               "attrs": {"name": ["..."]}, "consoleErrors": ["..."],
//               "screenshot": "/abs/path.png", "error": "..."}]}
//
// status is that of the last response that loaded the main frame: the
// URL's, or the one a click navigated to. A page that fails (the server
// unreachable, a selector not found in time) reports what went wrong in
// error, with what was read before it, and the next pages still run. Only
// a malformed spec (exit 2) or a browser that will not launch (exit 1)
// stop the script, with the reason on stderr.

const { chromium } = require('playwright-core');

// How long one navigation or action may take. Whoever runs the script
// bounds the whole of it.
const actionTimeout = 30000;

function fail(code, message) {
  process.stderr.write(message + '\n');
  process.exit(code);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

// checkSpec returns what is wrong with a parsed spec, or '' if nothing is:
// a typo in the Go test's spec should fail loudly, not read as a page
// without the expected text.
function checkSpec(spec) {
  const isObject = v => v !== null && typeof v === 'object' && !Array.isArray(v);
  const optional = (v, type) => v === undefined || v === null || typeof v === type;
  if (!isObject(spec)) {
    return 'the spec is not a JSON object';
  }
  if (typeof spec.executable !== 'string' || spec.executable === '') {
    return 'executable: want the path of the browser';
  }
  if (!Array.isArray(spec.pages)) {
    return 'pages: want an array';
  }
  for (const [i, p] of spec.pages.entries()) {
    const where = `pages[${i}]`;
    if (!isObject(p)) {
      return `${where}: want an object`;
    }
    if (typeof p.url !== 'string' || p.url === '') {
      return `${where}.url: want a URL`;
    }
    for (const key of ['username', 'password', 'screenshot', 'click', 'hover']) {
      if (!optional(p[key], 'string')) {
        return `${where}.${key}: want a string`;
      }
    }
    if (!optional(p.javaScriptEnabled, 'boolean')) {
      return `${where}.javaScriptEnabled: want true or false`;
    }
    for (const key of ['width', 'height']) {
      if (!optional(p[key], 'number') || (p[key] && !(Number.isInteger(p[key]) && p[key] > 0))) {
        return `${where}.${key}: want a positive number of pixels`;
      }
    }
    if (p.extract !== undefined && p.extract !== null) {
      if (!isObject(p.extract) || !Object.values(p.extract).every(s => typeof s === 'string')) {
        return `${where}.extract: want an object of CSS selectors`;
      }
    }
    if (p.attrs !== undefined && p.attrs !== null) {
      if (!isObject(p.attrs) || !Object.values(p.attrs).every(a =>
        isObject(a) && typeof a.selector === 'string' && typeof a.attribute === 'string')) {
        return `${where}.attrs: want an object of {"selector", "attribute"}`;
      }
    }
  }
  return '';
}

// cancelAuth has the page's HTTP authentication challenges refused, as a
// user does who cancels the browser's login dialog, so that the page is
// the 401 response and its body. Left alone, Chromium's headless mode,
// which has no dialog to show, fails the navigation with
// net::ERR_INVALID_AUTH_CREDENTIALS instead; playwright-core answers
// challenges itself only when given credentials.
async function cancelAuth(page) {
  const cdp = await page.context().newCDPSession(page);
  // Fetch pauses every request to offer its challenges; each goes on
  // unchanged. The page may be gone by the time an answer arrives.
  cdp.on('Fetch.requestPaused', e => {
    cdp.send('Fetch.continueRequest', { requestId: e.requestId }).catch(() => {});
  });
  cdp.on('Fetch.authRequired', e => {
    cdp.send('Fetch.continueWithAuth', {
      requestId: e.requestId,
      authChallengeResponse: { response: 'CancelAuth' },
    }).catch(() => {});
  });
  await cdp.send('Fetch.enable', { handleAuthRequests: true, patterns: [{ urlPattern: '*', requestStage: 'Request' }] });
}

// visit loads one page in a context of its own and reports on it.
async function visit(browser, p) {
  const result = { status: 0, title: '', extract: {}, attrs: {}, consoleErrors: [], screenshot: '' };
  const options = {
    javaScriptEnabled: p.javaScriptEnabled !== false,
    viewport: { width: p.width || 1400, height: p.height || 1000 },
  };
  if (p.username) {
    options.httpCredentials = { username: p.username, password: p.password || '' };
  }
  let context;
  try {
    context = await browser.newContext(options);
    context.setDefaultTimeout(actionTimeout);
    context.setDefaultNavigationTimeout(actionTimeout);
    const page = await context.newPage();
    if (!p.username) {
      await cancelAuth(page);
    }
    page.on('console', msg => {
      if (msg.type() === 'error') {
        result.consoleErrors.push(msg.text());
      }
    });
    // An uncaught exception is no console message, but as much a bug.
    page.on('pageerror', err => result.consoleErrors.push(String(err)));
    // A click that navigates has the page's status change with it.
    page.on('response', res => {
      if (res.request().isNavigationRequest() && res.frame() === page.mainFrame()) {
        result.status = res.status();
      }
    });

    const res = await page.goto(p.url, { waitUntil: 'load' });
    if (res) {
      result.status = res.status();
    }
    if (p.click) {
      // click waits for a navigation it starts to commit; the new page
      // must then finish loading before it is read.
      await page.click(p.click);
      await page.waitForLoadState('load');
    }
    if (p.hover) {
      await page.hover(p.hover);
    }
    result.title = await page.title();
    for (const [name, selector] of Object.entries(p.extract || {})) {
      const texts = await page.locator(selector).allTextContents();
      result.extract[name] = texts.map(s => s.trim());
    }
    for (const [name, { selector, attribute }] of Object.entries(p.attrs || {})) {
      result.attrs[name] = await page.locator(selector).evaluateAll(
        (els, attr) => els.map(el => el.getAttribute(attr)), attribute);
    }
    if (p.screenshot) {
      await page.screenshot({ path: p.screenshot, fullPage: true });
      result.screenshot = p.screenshot;
    }
  } catch (err) {
    result.error = (err && err.message) || String(err);
  } finally {
    if (context) {
      await context.close().catch(() => {});
    }
  }
  return result;
}

async function main() {
  let spec;
  try {
    spec = JSON.parse(await readStdin());
  } catch (err) {
    fail(2, `malformed spec: ${err.message}`);
  }
  const problem = checkSpec(spec);
  if (problem) {
    fail(2, `malformed spec: ${problem}`);
  }

  let browser;
  try {
    browser = await chromium.launch({
      executablePath: spec.executable,
      headless: true,
      // Tests run as root in containers, where Chromium's sandbox cannot
      // start and /dev/shm is often too small for its shared memory.
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
      timeout: 60000,
    });
  } catch (err) {
    fail(1, `launch ${spec.executable}: ${(err && err.message) || err}`);
  }
  const report = { version: browser.version(), pages: [] };
  try {
    for (const p of spec.pages) {
      report.pages.push(await visit(browser, p));
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch(err => {
  process.stderr.write((err && err.stack) || String(err));
  process.stderr.write('\n');
  process.exit(1);
});
