// import-check.mjs PROFILE: speedscope's own import of PROFILE (sigprof script's text output),
// run in jsdom: speedscope's release bundle (npm package speedscope, pinned in package.json) is
// loaded into a page whose URL asks it to load the profile (#profileURL=, served from a local
// port), as the browser app does.  Prints what speedscope logged ("Importing from linux perf script
// output" when its perf script importer accepted the text) and the page title it set from the
// profile ("comm pid: P tid: T - speedscope").  jsdom has no WebGL, so nothing is drawn: the check
// is the import, not the rendering.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { JSDOM, VirtualConsole } from "jsdom";

const here = path.dirname(fileURLToPath(import.meta.url));
const release = path.join(here, "node_modules/speedscope/dist/release");
const bundle = fs.readdirSync(release).find((f) => /^speedscope-.*\.js$/.test(f));
const text = fs.readFileSync(process.argv[2]);

const server = http.createServer((req, res) => res.end(text));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
// no extension speedscope knows: it must recognise the format from the text itself
const profileURL = `http://127.0.0.1:${server.address().port}/profile.txt`;

const logs = [];
const console = new VirtualConsole();
console.on("log", (...args) => logs.push(args.join(" ")));
console.on("error", (...args) => logs.push("error: " + args.join(" ")));
const dom = new JSDOM("<!DOCTYPE html><html><head></head><body></body></html>", {
  url: "http://127.0.0.1/index.html#profileURL=" + encodeURIComponent(profileURL),
  runScripts: "outside-only",
  pretendToBeVisual: true,
  virtualConsole: console,
});
// what a browser has and jsdom lacks
dom.window.fetch = fetch;
dom.window.TextDecoder = TextDecoder;
dom.window.TextEncoder = TextEncoder;
dom.window.matchMedia = () => ({ matches: false, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {} });
dom.window.alert = (message) => logs.push("alert: " + message);
// a profile of several threads opens speedscope's profile list, which scrolls its row into view
dom.window.Element.prototype.scrollIntoView = () => {};
dom.window.eval(fs.readFileSync(path.join(release, bundle), "utf8"));
for (let waited = 0; waited < 20000 && !dom.window.document.title.endsWith("- speedscope"); waited += 100)
  await new Promise((resolve) => setTimeout(resolve, 100));
server.close();
for (const line of logs) process.stdout.write(line.split("\n")[0] + "\n");
process.stdout.write("title: " + dom.window.document.title + "\n");
process.exit(0);
