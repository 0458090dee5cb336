/*
 * report_html.js: the script of `sigprof report --html` (and of `diff --html`),
 * linked into report_html.o as it is.  It reads the two JSON documents the
 * page carries (report_html.c says what they hold) and draws:
 *
 *   the header and the path table, every collector's section as tables
 *   (an array of objects is a table, nested objects become dotted columns,
 *   stacks are shown leaf first in a cell), the top functions, and
 *   a flame graph per collector (and the wake flame graph, waiter -- waker,
 *   where waits were linked to their wakers): root at the bottom, a frame's width its
 *   share; click to zoom (click the root or an ancestor to zoom out),
 *   search (a substring or /regex/) highlights frames and totals the
 *   matched samples, hover shows counts and shares, and a switch picks
 *   samples or time (the weights, ns of CPU for cpu-clock).  Kernel frames
 *   are blue, user frames warm, [signal ...] and [unwind: ...] frames
 *   purple and outlined.  In diff mode frames are sized by the new
 *   recording and coloured red where their share grew, blue where it
 *   shrank (Brendan Gregg's differential flame graphs).
 *
 * Frames narrower than a pixel are not drawn (their parent holds their
 * width), so a page of 100 000 stacks draws a few thousand elements.
 * window.sigprof holds the state, for tests: location.hash "#selftest"
 * runs checks and writes their results into the pre element "selftest",
 * "#search=TERM" fills the search box of every flame graph, "#select=FROM,TO"
 * (ms) selects that range of the timeline.
 */
"use strict";

(function () {
	const started = performance.now();
	const report = JSON.parse(document.getElementById("sigprof-report").textContent);
	const baseElement = document.getElementById("sigprof-report-base");
	const baseReport = baseElement ? JSON.parse(baseElement.textContent) : null;
	const flameData = JSON.parse(document.getElementById("sigprof-flame").textContent);
	const diffMode = flameData.mode === "diff";
	const FRAME_HEIGHT = 18;

	function el(tag, attrs, ...children) {
		const e = document.createElement(tag);
		for (const k in attrs || {}) {
			if (k === "class") e.className = attrs[k];
			else e.setAttribute(k, attrs[k]);
		}
		for (const c of children) {
			if (c === null || c === undefined) continue;
			e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
		}
		return e;
	}

	function share(part, whole) {
		if (!whole) return "-";
		const s = (100 * part) / whole;
		if (part && s < 0.01) return "<0.01%";
		if (part !== whole && s > 99.99) return ">99.99%";
		return s.toFixed(2) + "%";
	}

	function formatNumber(v) {
		if (typeof v !== "number") return String(v);
		return Number.isInteger(v) ? String(v) : v.toFixed(3);
	}

	/* ---- labels: what people read, not the JSON's keys ---- */

	/* The sections' titles, by their JSON key (report-json.md). */
	const SECTION_TITLES = {
		summary: "Findings",
		signals: "Signals",
		signals_other_tasks_generated: "Signals generated for other processes' tasks (not counted)",
		futex_ops: "Futex calls per operation",
		futexes: "Futex words",
		futex_summary: "Futex recording: mode, exact totals, what was estimated",
		sched: "Scheduler waits",
		locks: "Kernel lock contention, per lock",
		lock_names: "Kernel lock contention, per lock name",
		lock_futex_words: "Kernel lock contention, per futex word",
		lock_summary: "Kernel lock contention: totals",
		cache: "Cache misses",
		c2c: "Cache-to-cache transfers (c2c)",
		cachelines: "Cachelines by HITM",
		functions: "Top functions",
	};

	/* Column words that read better spelled out or with their unit apart. */
	const WORDS = {
		ns: "(ns)", ms: "(ms)", us: "(µs)", pct: "%", percent: "%", p50: "p50", p99: "p99",
		uaddr: "address", dso: "file", sym: "function", tid: "thread", pid: "process", signo: "number",
		waitv: "waitv", hitm: "HITM", dram: "DRAM", llc: "LLC", lcl: "local", rmt: "remote",
		not_delivered: "not queued", already_pending: "already pending (merged)", lose_info: "queued without siginfo",
		overflow: "dropped (queue full)", unmeasured_waits: "waits not timed", unpaired_exits: "exits without their entry",
		orphan_exits: "exits of no known op", sch_delay: "scheduling delay",
	};

	/* Leaves that count things: a group's unit ("latency_ns") is not theirs. */
	const COUNTS = new Set(["count", "calls", "waits", "samples", "contentions", "errors"]);

	/*
	 * A JSON key as a column's label: "latency_ns.p50" -> "latency p50 (ns)",
	 * "latency_ns.count" -> "latency count", "slowest_latency.ns" -> "slowest latency (ns)",
	 * "not_delivered.already_pending" -> "not queued: already pending (merged)".
	 */
	function label(key) {
		const parts = String(key).split(".");
		let text = "", unit = null, grouped = false;
		parts.forEach((part, i) => {
			let words;
			if (WORDS[part] !== undefined) words = [WORDS[part]];
			else words = part.split("_").map((x) => (WORDS[x] !== undefined ? WORDS[x] : x));
			const u = words.length && /^\(.*\)$/.test(words[words.length - 1]) ? words.pop() : null;
			if (u) unit = u;
			if (words.length) text += (i === 0 || !text ? "" : grouped ? " " : ": ") + words.join(" ");
			grouped = u !== null;
		});
		if (COUNTS.has(parts[parts.length - 1])) unit = null;
		return text + (unit ? " " + unit : "");
	}

	function sectionTitle(key) {
		return SECTION_TITLES[key] || label(key);
	}

	/* A table in a box that scrolls sideways when it is wider than the page (the page itself never does). */
	function wrapTable(t) {
		return el("div", { class: "table-wrap" }, t);
	}

	/* ---- the header, the path table, the sections ---- */

	function drawHeader(doc, title) {
		const m = doc.meta;
		const rows = [
			["file", m.file],
			["command", (m.command || []).join(" ")],
			["recorded", new Date(m.start_time_ns / 1e6).toISOString().replace("T", " ").slice(0, 19) +
				" on " + m.hostname + " (Linux " + m.kernel + ", " + m.arch + ", " + m.ncpus + " CPUs)"],
			["duration", m.duration_s + " s" + (m.exit_status !== undefined ? ", exit status " + m.exit_status : "")],
			["samples", m.samples + ", lost " + m.lost + " (" + m.lost_percent + "%)"],
		];
		const table = el("table", { class: "meta" });
		for (const [k, v] of rows) table.appendChild(el("tr", null, el("th", null, k), el("td", null, v)));
		for (const c of m.collectors || []) {
			const text = c.status === "ok" ? collectorEvents(c) : "unavailable: " + c.reason;
			table.appendChild(el("tr", null, el("th", null, "collector " + c.name),
				el("td", c.status === "ok" ? null : { class: "unavailable" }, text)));
		}
		for (const n of m.notes || []) table.appendChild(el("tr", null, el("th", null, "note"), el("td", null, n)));
		return el("section", { id: "header" }, el("h1", null, title), table);
	}

	/* A collector's events and their samples, as the text report's header line gives them. */
	function collectorEvents(c) {
		const events = c.events || [];
		const total = c.samples + " samples";
		if (events.length <= 1) return (events.length ? events[0].name : c.event) + ", " + total;
		const sampled = events.filter((e) => e.samples > 0);
		const copies = events.filter((e) => !e.samples && e.stack_copies > 0);
		const silent = events.length - sampled.length - copies.length;
		let text;
		if (sampled.length === 0) text = events.length + " events, " + total;
		else if (sampled.length === 1) text = sampled[0].name + ", " + total;
		else text = sampled.map((e) => e.name + " " + e.samples).join(" + ") + " = " + total;
		if (copies.length)
			text += "; stack copies lent to them: " + copies.map((e) => e.name + " " + e.stack_copies).join(" + ");
		if (sampled.length && silent) text += "; " + silent + " more event" + (silent === 1 ? "" : "s") + " without samples";
		return text;
	}

	function drawPaths(doc) {
		const collectors = (doc.meta.collectors || []).filter((c) => c.status === "ok");
		const figureKeys = [];
		for (const row of doc.paths)
			for (const k in row)
				if (k !== "path" && k !== "samples" && !figureKeys.includes(k)) figureKeys.push(k);
		/* as in text: the collectors and paths that are zero throughout are left out */
		const shownCollectors = collectors.filter((c) => doc.paths.some((r) => (r.samples[c.name] || 0) > 0));
		collectors.length = 0;
		collectors.push(...shownCollectors);
		const shownKeys = figureKeys.filter((k) => doc.paths.some((r) => r[k]));
		figureKeys.length = 0;
		figureKeys.push(...shownKeys);
		const head = el("tr", null, el("th", null, "path"));
		for (const c of collectors) head.append(el("th", null, c.name + " samples"), el("th", null, "%"));
		for (const k of figureKeys) head.append(el("th", null, label(k)));
		const table = el("table", { id: "paths" }, head);
		for (const row of doc.paths) {
			if (!collectors.some((c) => row.samples[c.name]) && !figureKeys.some((k) => row[k])) continue;
			const tr = el("tr", null, el("td", { class: "path" }, row.path));
			for (const c of collectors) {
				const v = row.samples[c.name] || 0;
				tr.append(el("td", { class: "num" }, v), el("td", { class: "num" }, share(v, c.samples)));
			}
			for (const k of figureKeys) tr.append(el("td", { class: "num" }, formatNumber(row[k])));
			table.appendChild(tr);
		}
		return el("section", null, el("h2", null, "Paths: where each collector's samples land"), wrapTable(table));
	}

	function stackText(frames) {
		return el("pre", { class: "stack" }, frames.map((f) => f.sym + "  " + (f.dso || "")).join("\n"));
	}

	/* An object's scalar leaves as dotted keys; arrays of frames kept as stacks. */
	function flatten(obj, prefix, out) {
		for (const k in obj) {
			const v = obj[k], key = prefix ? prefix + "." + k : k;
			if (v !== null && typeof v === "object" && !Array.isArray(v)) flatten(v, key, out);
			else out[key] = v;
		}
		return out;
	}

	function cell(v) {
		if (Array.isArray(v)) {
			if (v.length && v[0] && Array.isArray(v[0].frames)) {
				const td = el("td");
				for (const s of v.slice(0, 3)) {
					td.appendChild(el("div", null, (s.count !== undefined ? s.count + ": " : "")));
					td.appendChild(stackText(s.frames));
				}
				if (v.length > 3) td.appendChild(el("div", null, "... " + (v.length - 3) + " more stacks"));
				return td;
			}
			if (v.length && v[0] && v[0].sym !== undefined) {
				const td = el("td");
				td.appendChild(stackText(v));
				return td;
			}
			return el("td", null, v.length && typeof v[0] !== "object" ? v.join(", ") : v.length + " items");
		}
		return el("td", { class: typeof v === "number" ? "num" : "" }, v === null ? "" : formatNumber(v));
	}

	/* Whether a column says nothing: every row's value zero, false, empty or absent. */
	function emptyColumn(flat, k) {
		return flat.every((r) => r[k] === undefined || r[k] === null || r[k] === 0 || r[k] === false || r[k] === "" ||
			(Array.isArray(r[k]) && r[k].length === 0));
	}

	function table(rows) {
		const flat = rows.map((r) => (r !== null && typeof r === "object" ? flatten(r, "", {}) : { value: r }));
		const keys = [];
		for (const r of flat) for (const k in r) if (!keys.includes(k)) keys.push(k);
		const shown = keys.filter((k) => !emptyColumn(flat, k));
		const t = el("table", null, el("tr", null, ...shown.map((k) => el("th", { "data-key": k }, label(k)))));
		for (const r of flat) t.appendChild(el("tr", null, ...shown.map((k) => cell(r[k] === undefined ? "" : r[k]))));
		return wrapTable(t);
	}

	function drawSection(name, value) {
		const s = el("section", { class: "collector-section", "data-section": name }, el("h2", null, sectionTitle(name)));
		if (Array.isArray(value)) {
			s.appendChild(value.length ? table(value) : el("p", null, "none"));
		} else if (value && typeof value === "object") {
			const scalars = {};
			for (const k in value) {
				const v = value[k];
				if (Array.isArray(v) && v.length && typeof v[0] === "object" && !v[0].sym) {
					s.appendChild(el("h3", null, label(k)));
					s.appendChild(table(v));
				} else scalars[k] = v;
			}
			const flat = flatten(scalars, "", {});
			const t = el("table", { class: "figures" });
			for (const k in flat) t.appendChild(el("tr", null, el("th", { "data-key": k }, label(k)), cell(flat[k])));
			s.insertBefore(wrapTable(t), s.children[1] || null);
		} else {
			s.appendChild(el("p", null, String(value)));
		}
		return s;
	}

	/* The text report's first screen: the findings ranked, each with where to look next, and the caveats. */
	function drawSummary(doc) {
		const sum = doc.summary;
		const s = el("section", { id: "summary", "data-section": "summary" }, el("h2", null, SECTION_TITLES.summary));
		if (!sum) return s;
		if (sum.recorder_percent !== null && sum.recorder_percent !== undefined)
			s.appendChild(el("p", { class: sum.recorder_percent >= 10 ? "warning" : "" },
				"cost: sigprof's own recording holds " + sum.recorder_percent.toFixed(0) + "% of the cpu samples (the recorder path)" +
				(sum.recorder_percent >= 10 ? ": that distorts the figures; record less (-e, --futex count, -F)" : "")));
		const t = el("table", { class: "findings" }, el("tr", null, el("th", null, "share of the workload's cpu time"),
			el("th", null, "finding"), el("th", null, "where to look next")));
		for (const f of sum.findings)
			t.appendChild(el("tr", null, el("td", { class: "num" }, f.share_percent === null ? "-" : f.share_percent.toFixed(1) + "%"),
				el("td", null, f.text), el("td", null, f.next)));
		s.appendChild(wrapTable(t));
		if (sum.caveats.length) {
			s.appendChild(el("h3", null, "Read with care"));
			s.appendChild(el("ul", null, ...sum.caveats.map((c) => el("li", null, c))));
		}
		return s;
	}

	function drawFunctions(doc) {
		const s = el("section", null, el("h2", null, "Top functions"));
		const by = {};
		for (const f of doc.functions || []) (by[f.collector] = by[f.collector] || []).push(f);
		for (const c in by) {
			s.appendChild(el("h3", null, c + " samples"));
			s.appendChild(table(by[c].map((f) => ({ self: f.self, total: f.total, function: f.sym, dso: f.dso }))));
		}
		return s;
	}

	/* ---- flame graphs ---- */

	function frameColor(kind, name, delta) {
		if (diffMode) {
			if (delta === null) return "hsl(0, 0%, 85%)";
			const a = Math.min(1, Math.abs(delta) * 4);
			const light = Math.round(95 - 45 * a);
			return delta > 0 ? "hsl(0, 85%, " + light + "%)" : delta < 0 ? "hsl(220, 85%, " + light + "%)" : "hsl(0, 0%, 95%)";
		}
		let h = 0;
		for (let i = 0; i < name.length && i < 12; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
		const v = (h % 1000) / 1000;
		if (kind & 2) return "hsl(285, 55%, " + Math.round(72 + 10 * v) + "%)";
		if (kind & 1) return "hsl(" + Math.round(195 + 25 * v) + ", 70%, " + Math.round(62 + 12 * v) + "%)";
		return "hsl(" + Math.round(10 + 40 * v) + ", 90%, " + Math.round(55 + 10 * v) + "%)";
	}

	/* The tree of one collector's stacks: node.v holds [count, weight] (diff: base count, weight, new count, weight). */
	function buildTree(collector) {
		const nv = diffMode ? 4 : 2;
		const root = { f: -1, v: new Array(nv).fill(0), ch: new Map(), parent: null, depth: 0 };
		let maxDepth = 0;
		for (const s of collector.stacks) {
			let node = root;
			for (let k = 0; k < nv; k++) root.v[k] += s[k];
			for (let i = nv; i < s.length; i++) {
				let child = node.ch.get(s[i]);
				if (!child) {
					child = { f: s[i], v: new Array(nv).fill(0), ch: new Map(), parent: node, depth: node.depth + 1 };
					node.ch.set(s[i], child);
				}
				for (let k = 0; k < nv; k++) child.v[k] += s[k];
				node = child;
			}
			if (node.depth > maxDepth) maxDepth = node.depth;
		}
		return { root, maxDepth };
	}

	function FlameGraph(collector, index) {
		const self = this;
		const tree = buildTree(collector);
		this.collector = collector;
		this.root = tree.root;
		this.maxDepth = tree.maxDepth;
		this.zoom = this.root;
		this.weight = collector.weight && collector.time_unit ? 1 : 0; /* 0: samples (waits), 1: time */
		this.search = "";
		this.matchTotal = 0;
		const id = "flame-" + collector.name;
		const weightSelect = el("select", { class: "flame-weight" }, el("option", { value: "0" }, collector.count_unit || "samples"));
		if (collector.time_unit) weightSelect.appendChild(el("option", { value: "1" }, "time (" + collector.time_unit + ")"));
		weightSelect.value = String(this.weight);
		weightSelect.addEventListener("change", () => { self.weight = Number(weightSelect.value); self.draw(); });
		const searchBox = el("input", { type: "search", class: "flame-search", placeholder: "search (text or /regex/)", size: "30" });
		searchBox.addEventListener("input", () => self.setSearch(searchBox.value));
		const reset = el("button", { type: "button", class: "flame-reset" }, "reset zoom");
		reset.addEventListener("click", () => self.zoomTo(self.root));
		this.searchBox = searchBox;
		this.info = el("div", { class: "flame-info" }, "hover a frame for its counts; click to zoom");
		this.matchLine = el("div", { class: "flame-match" });
		this.canvas = el("div", { class: "flame-canvas" });
		this.canvas.style.height = (this.maxDepth + 1) * FRAME_HEIGHT + "px";
		const legend = el("div", { class: "legend" });
		if (diffMode) {
			for (const [text, color] of [["grew", frameColor(0, "", 0.2)], ["shrank", frameColor(0, "", -0.2)], ["new only / same", frameColor(0, "", 0)]])
				legend.appendChild(Object.assign(el("span", null, text), { style: "background:" + color }));
		} else {
			for (const [text, kind] of [["user", 0], ["kernel", 1], ["[signal ...] [unwind: ...]", 2]]) {
				const span = el("span", null, text);
				span.style.background = frameColor(kind, "x", null);
				legend.appendChild(span);
			}
		}
		this.element = el("section", { class: "flame", id: id, "data-collector": collector.name },
			el("h2", null, collector.title ? (diffMode ? "Differential: " : "") + collector.title
				: (diffMode ? "Differential flame graph, " : "Flame graph, ") + collector.name),
			el("div", { class: "flame-controls" }, el("label", null, "weight ", weightSelect), searchBox, reset, legend),
			this.matchLine, this.canvas, this.info);
		this.canvas.addEventListener("click", (ev) => {
			const t = ev.target.closest(".frame");
			if (t && t.node) self.zoomTo(t.node === self.zoom && self.zoom.parent ? self.zoom.parent : t.node);
		});
		this.canvas.addEventListener("mouseover", (ev) => {
			const t = ev.target.closest(".frame");
			if (t && t.node) self.info.textContent = self.describe(t.node);
		});
		this.index = index;
	}

	FlameGraph.prototype.value = function (node) {
		return diffMode ? node.v[2 + this.weight] : node.v[this.weight];
	};

	FlameGraph.prototype.name = function (node) {
		return node.f < 0 ? "all" : flameData.frames[node.f][0];
	};

	FlameGraph.prototype.describe = function (node) {
		const f = node.f < 0 ? ["all", "", 0] : flameData.frames[node.f];
		const unit = this.weight ? this.collector.time_unit || "weight" : this.collector.count_unit || "samples";
		let text = f[0] + (f[1] ? " (" + f[1] + ")" : "") + (f[2] & 1 ? " [kernel]" : "") + ": ";
		if (diffMode) {
			const b = node.v[this.weight], n = node.v[2 + this.weight];
			text += "base " + b + " " + unit + " (" + share(b, this.root.v[this.weight]) + "), new " + n + " " + unit +
				" (" + share(n, this.root.v[2 + this.weight]) + ")";
		} else {
			const v = this.value(node);
			text += v + " " + unit + ", " + share(v, this.value(this.root)) + " of all" +
				(this.zoom !== this.root ? ", " + share(v, this.value(this.zoom)) + " of the zoomed frame" : "");
		}
		return text;
	};

	FlameGraph.prototype.matches = function (name) {
		if (!this.search) return false;
		return this.searchRegex ? this.searchRegex.test(name) : name.toLowerCase().includes(this.search.toLowerCase());
	};

	FlameGraph.prototype.setSearch = function (term) {
		this.search = term;
		this.searchRegex = null;
		const m = /^\/(.+)\/$/.exec(term);
		if (m) {
			try { this.searchRegex = new RegExp(m[1]); } catch (e) { this.searchRegex = null; }
		}
		this.draw();
	};

	/* The matched total: the value of every matching frame that has no matching frame below the root above it. */
	FlameGraph.prototype.countMatches = function () {
		let total = 0;
		const walk = (node) => {
			if (node.f >= 0 && this.matches(flameData.frames[node.f][0])) {
				total += this.value(node);
				return;
			}
			for (const child of node.ch.values()) walk(child);
		};
		walk(this.root);
		return total;
	};

	FlameGraph.prototype.zoomTo = function (node) {
		this.zoom = node;
		this.draw();
	};

	FlameGraph.prototype.draw = function () {
		const width = this.canvas.clientWidth || 1200;
		const height = (this.maxDepth + 1) * FRAME_HEIGHT;
		const total = this.value(this.zoom) || 1;
		const scale = width / total;
		const frag = document.createDocumentFragment();
		let drawn = 0, highlighted = 0;
		const place = (node, x, w, ancestor) => {
			const d = el("div", { class: "frame" });
			const f = node.f < 0 ? ["all", "", 0] : flameData.frames[node.f];
			if (f[2] & 1) d.classList.add("kernel");
			if (f[2] & 2) d.classList.add("mark");
			if (ancestor) d.classList.add("ancestor");
			let delta = null;
			if (diffMode) {
				const bt = this.root.v[this.weight], nt = this.root.v[2 + this.weight];
				delta = node.v[this.weight] ? (nt ? node.v[2 + this.weight] / nt : 0) - (bt ? node.v[this.weight] / bt : 0) : null;
				if (node.v[this.weight] === 0) delta = node.v[2 + this.weight] ? 1 : 0;
			}
			d.style.background = frameColor(f[2], f[0], delta);
			d.style.left = x + "px";
			d.style.width = w + "px";
			d.style.top = height - (node.depth + 1) * FRAME_HEIGHT + "px";
			if (w > 30) d.textContent = f[0];
			d.title = f[0];
			if (node.f >= 0 && this.matches(f[0])) {
				d.classList.add("match");
				highlighted++;
			}
			d.node = node;
			d.dataset.value = this.value(node);
			frag.appendChild(d);
			drawn++;
		};
		for (let a = this.zoom; a; a = a.parent) place(a, 0, width, a !== this.zoom);
		const walk = (node, x) => {
			let cx = x;
			for (const child of node.ch.values()) {
				const w = this.value(child) * scale;
				if (w >= 1) {
					place(child, cx, w, false);
					walk(child, cx);
				}
				cx += w;
			}
		};
		walk(this.zoom, 0);
		this.canvas.replaceChildren(frag);
		this.drawn = drawn;
		this.highlighted = highlighted;
		if (this.search) {
			this.matchTotal = this.countMatches();
			const unit = this.weight ? this.collector.time_unit || "weight" : this.collector.count_unit || "samples";
			this.matchLine.textContent = "matched " + JSON.stringify(this.search) + ": " + this.matchTotal + " " + unit +
				" (" + share(this.matchTotal, this.value(this.root)) + ")";
		} else {
			this.matchTotal = 0;
			this.matchLine.textContent = "";
		}
		this.element.dataset.matchTotal = this.matchTotal;
		this.element.dataset.total = this.value(this.root);
	};

	/* ---- the timeline: one row per thread, its states over time ---- */

	const CLASS_COLORS = ["#3a9d3a", "#e8c547", "#d9534f", "#8e44ad", "#3b7dd8", "#8fb3d9", "#aaaaaa", "#f08c2e"];
	/* the marks above a row: a signal handler's start, a kernel lock's contention (the kernel lock class's colour), the slowest waits */
	const MARK_COLORS = { signal: "#c0392b", lock: "#8e44ad", slowest: "#000" };
	const ROW_HEIGHT = 18, AXIS_HEIGHT = 20, LABEL_WIDTH = 190;

	function formatNs(ns) {
		if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
		if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
		if (ns >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
		return Math.round(ns) + " ns";
	}

	/*
	 * The timeline's data (report_html.c, write_timeline): per thread its spans of a column or more as
	 * [start, duration, class, root frame, stack] (times in ns from the first thread's start), the shorter
	 * ones summed per column and class as [column, ns of each class], and marks [time, kind, text].
	 * Drawn on a canvas: a span as a bar of its class's colour, a pixel holding several spans or columns as
	 * the classes' shares stacked.  Wheel zooms at the pointer, shift+wheel or the arrows pan, a drag
	 * selects a range, whose wall-clock flame graph is drawn below the timeline.
	 */
	function Timeline(data) {
		const self = this;
		this.data = data;
		this.view = [0, data.length_ns];
		this.selection = null;
		this.threads = data.threads;
		const legend = el("div", { class: "legend" });
		data.classes.forEach((name, c) => {
			const span = el("span", null, name);
			span.style.background = CLASS_COLORS[c];
			legend.appendChild(span);
		});
		const button = (text, action) => {
			const b = el("button", { type: "button" }, text);
			b.addEventListener("click", action);
			return b;
		};
		this.canvas = el("canvas", { class: "timeline-canvas" });
		this.info = el("div", { class: "timeline-info" }, "drag to select a range: its wall-clock flame graph is drawn below; wheel zooms, shift+wheel pans");
		this.rangeLine = el("div", { class: "timeline-range" });
		const more = data.threads_left_out ? el("p", null, data.threads_left_out + " more threads, shorter-lived, not shown (report --tid TID shows one)") : null;
		this.element = el("section", { id: "timeline" },
			el("h2", null, "Timeline: each thread's states over time"),
			el("div", { class: "timeline-controls" },
				button("zoom to selection", () => { if (self.selection) self.zoomTo(self.selection[0], self.selection[1]); }),
				button("zoom out", () => self.zoomBy(2, (self.view[0] + self.view[1]) / 2)),
				button("◀", () => self.pan(-0.25)), button("▶", () => self.pan(0.25)),
				button("reset", () => self.zoomTo(0, data.length_ns)),
				button("clear selection", () => self.select(null)), legend),
			this.rangeLine, this.canvas, this.info, more);
		this.flameHolder = el("div", { id: "timeline-flame" });
		this.element.appendChild(this.flameHolder);
		let drag = null;
		const timeAt = (ev) => {
			const r = self.canvas.getBoundingClientRect();
			const x = Math.min(Math.max(ev.clientX - r.left - LABEL_WIDTH, 0), self.plotWidth());
			return self.view[0] + (x / self.plotWidth()) * (self.view[1] - self.view[0]);
		};
		this.canvas.addEventListener("mousedown", (ev) => { drag = { from: timeAt(ev), x: ev.clientX }; });
		window.addEventListener("mouseup", (ev) => {
			if (!drag) return;
			const to = timeAt(ev), moved = Math.abs(ev.clientX - drag.x);
			if (moved > 3) self.select([Math.min(drag.from, to), Math.max(drag.from, to)]);
			drag = null;
		});
		this.canvas.addEventListener("mousemove", (ev) => {
			if (drag && Math.abs(ev.clientX - drag.x) > 3) {
				self.draw([Math.min(drag.from, timeAt(ev)), Math.max(drag.from, timeAt(ev))]);
				return;
			}
			const r = self.canvas.getBoundingClientRect();
			const row = Math.floor((ev.clientY - r.top - AXIS_HEIGHT) / ROW_HEIGHT);
			self.info.textContent = row >= 0 && row < self.threads.length && ev.clientX - r.left > LABEL_WIDTH
				? self.describe(self.threads[row], timeAt(ev)) : "";
		});
		this.canvas.addEventListener("wheel", (ev) => {
			ev.preventDefault();
			if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) self.pan((ev.deltaX || ev.deltaY) > 0 ? 0.1 : -0.1);
			else self.zoomBy(ev.deltaY > 0 ? 1.25 : 0.8, timeAt(ev));
		}, { passive: false });
	}

	Timeline.prototype.plotWidth = function () {
		return Math.max(100, this.canvas.width - LABEL_WIDTH);
	};

	Timeline.prototype.zoomTo = function (a, b) {
		const min = this.data.resolution_ns * 4;
		if (b - a < min) { const mid = (a + b) / 2; a = mid - min / 2; b = mid + min / 2; }
		this.view = [Math.max(0, a), Math.min(this.data.length_ns, b)];
		this.draw();
	};

	Timeline.prototype.zoomBy = function (factor, at) {
		const [a, b] = this.view;
		this.zoomTo(at - (at - a) * factor, at + (b - at) * factor);
	};

	Timeline.prototype.pan = function (fraction) {
		const [a, b] = this.view, d = (b - a) * fraction;
		const shift = Math.max(-a, Math.min(this.data.length_ns - b, d));
		this.view = [a + shift, b + shift];
		this.draw();
	};

	/* The span of thread th at time t (binary search), or null in a column's time. */
	Timeline.prototype.spanAt = function (th, t) {
		const s = th.spans;
		let lo = 0, hi = s.length / 5 - 1, found = -1;
		while (lo <= hi) {
			const mid = (lo + hi) >> 1;
			if (s[mid * 5] <= t) { found = mid; lo = mid + 1; } else hi = mid - 1;
		}
		if (found < 0 || s[found * 5] + s[found * 5 + 1] <= t) return null;
		return s.slice(found * 5, found * 5 + 5);
	};

	Timeline.prototype.stackText = function (stack, max) {
		if (stack < 0) return "no stack recorded";
		const frames = this.data.stacks[stack];
		const names = [];
		for (let i = frames.length - 1; i >= 0 && names.length < max; i--) names.push(flameData.frames[frames[i]][0]);
		return names.join(" <- ") + (frames.length > max ? " <- ..." : "");
	};

	Timeline.prototype.describe = function (th, t) {
		const who = th.comm + " " + th.pid + "/" + th.tid + " at " + formatNs(t) + ": ";
		/* a mark within its drawn half-width (3 px) of t */
		const [a, b] = this.view, near = 3 * (b - a) / this.plotWidth();
		for (const m of th.marks)
			if (Math.abs(m[0] - t) <= near) return th.comm + " " + th.pid + "/" + th.tid + " at " + formatNs(m[0]) + ": " + m[2];
		const span = this.spanAt(th, t);
		if (span) return who + flameData.frames[span[3]][0] + " for " + formatNs(span[1]) + " (from " + formatNs(span[0]) + "); " + this.stackText(span[4], 8);
		const col = Math.floor(t / this.data.resolution_ns), c = th.columns;
		for (let i = 0; i < c.length; i += 9) {
			if (c[i] !== col) continue;
			const parts = [];
			for (let k = 0; k < 8; k++) if (c[i + 1 + k]) parts.push(this.data.classes[k] + " " + formatNs(c[i + 1 + k]));
			return who + "spans shorter than a column (" + formatNs(this.data.resolution_ns) + "): " + parts.join(", ");
		}
		return who + (t < th.start || t >= th.end ? "not alive" : "-");
	};

	/* Draw the rows within this.view; preview: a selection being dragged. */
	Timeline.prototype.draw = function (preview) {
		const cssWidth = this.canvas.clientWidth || 1200;
		const cssHeight = AXIS_HEIGHT + this.threads.length * ROW_HEIGHT;
		this.canvas.style.height = cssHeight + "px";
		this.canvas.width = Math.round(cssWidth);
		this.canvas.height = cssHeight;
		const g = this.canvas.getContext && this.canvas.getContext("2d");
		const [a, b] = this.view, plot = this.plotWidth(), scale = plot / (b - a);
		const x = (t) => LABEL_WIDTH + (t - a) * scale;
		this.drawnSpans = 0;
		this.drawnColumns = 0;
		this.rowNs = this.threads.map(() => new Array(8).fill(0)); /* per row, the ns per class the view shows */
		this.rowPx = this.threads.map(() => new Array(8).fill(0)); /* per row, the pixels drawn per class */
		const cells = new Float64Array(plot * 8);
		this.threads.forEach((th, row) => {
			const y = AXIS_HEIGHT + row * ROW_HEIGHT;
			cells.fill(0);
			const rowNs = this.rowNs[row], rowPx = this.rowPx[row];
			const s = th.spans;
			for (let i = 0; i < s.length; i += 5) {
				const s0 = Math.max(s[i], a), s1 = Math.min(s[i] + s[i + 1], b);
				if (s1 <= s0) continue;
				rowNs[s[i + 2]] += s1 - s0;
				const x0 = x(s0), x1 = x(s1);
				if (x1 - x0 >= 1) {
					if (g) { g.fillStyle = CLASS_COLORS[s[i + 2]]; g.fillRect(x0, y + 1, Math.max(1, x1 - x0 - 0.5), ROW_HEIGHT - 2); }
					rowPx[s[i + 2]] += x1 - x0;
					this.drawnSpans++;
				} else {
					cells[Math.min(plot - 1, Math.max(0, Math.floor(x0 - LABEL_WIDTH))) * 8 + s[i + 2]] += s1 - s0;
				}
			}
			const c = th.columns, res = this.data.resolution_ns;
			for (let i = 0; i < c.length; i += 9) {
				const c0 = c[i] * res, c1 = c0 + res;
				if (c1 <= a || c0 >= b) continue;
				const part = (Math.min(c1, b) - Math.max(c0, a)) / res; /* the share of the column in view */
				const px = Math.min(plot - 1, Math.max(0, Math.floor(x(Math.max(c0, a)) - LABEL_WIDTH)));
				for (let k = 0; k < 8; k++) {
					cells[px * 8 + k] += c[i + 1 + k] * part;
					rowNs[k] += c[i + 1 + k] * part;
				}
				this.drawnColumns++;
			}
			/* a pixel of short spans and columns is drawn as its classes' shares; it covers their time */
			for (let k = 0; k < plot * 8; k++) rowPx[k % 8] += cells[k] * scale;
			if (g) {
				for (let px = 0; px < plot; px++) {
					let total = 0;
					for (let k = 0; k < 8; k++) total += cells[px * 8 + k];
					if (!total) continue;
					let top = y + 1;
					for (let k = 0; k < 8; k++) {
						const h = (cells[px * 8 + k] / total) * (ROW_HEIGHT - 2);
						if (h <= 0) continue;
						g.fillStyle = CLASS_COLORS[k];
						g.fillRect(LABEL_WIDTH + px, top, 1, h);
						top += h;
					}
				}
				for (const m of th.marks) {
					if (m[0] < a || m[0] > b) continue;
					g.fillStyle = MARK_COLORS[m[1]] || "#000";
					const mx = x(m[0]);
					g.beginPath(); g.moveTo(mx - 3, y); g.lineTo(mx + 3, y); g.lineTo(mx, y + 5); g.fill();
				}
				g.fillStyle = "#222";
				g.font = "11px monospace";
				g.textBaseline = "middle";
				const label = th.comm + " " + th.tid;
				g.fillText(label.length > 26 ? label.slice(0, 25) + "…" : label, 2, y + ROW_HEIGHT / 2);
			}
		});
		if (g) {
			g.fillStyle = "#444";
			g.font = "10px monospace";
			g.textBaseline = "top";
			/* ticks 1, 2 or 5 x 10^k ns apart, at least 100 px: a label ("120.000 ms") is about 60 px wide */
			const least = 100 / scale, decade = Math.pow(10, Math.floor(Math.log10(least)));
			const step = decade * ([1, 2, 5, 10].find((m) => decade * m >= least) || 10);
			for (let t = Math.ceil(a / step) * step; t <= b; t += step) {
				g.fillRect(x(t), 0, 1, 6);
				g.fillText(formatNs(t), x(t) + 2, 6);
			}
			const sel = preview || this.selection;
			if (sel) {
				g.fillStyle = "rgba(40, 90, 200, 0.18)";
				g.fillRect(x(Math.max(sel[0], a)), 0, Math.max(1, (Math.min(sel[1], b) - Math.max(sel[0], a)) * scale), cssHeight);
			}
		}
		this.rangeLine.textContent = "showing " + formatNs(a) + " to " + formatNs(b) + " of " + formatNs(this.data.length_ns) +
			(this.selection ? "; selected " + formatNs(this.selection[0]) + " to " + formatNs(this.selection[1]) +
				" (" + formatNs(this.selection[1] - this.selection[0]) + ")" : "") +
			"; a column is " + formatNs(this.data.resolution_ns);
	};

	/*
	 * The wall-clock stacks of a range [a, b): each span's part inside it on its root frame and stack, each
	 * column's part (pro rata) on its class's root frame, without a stack.  As a flame collector.
	 */
	Timeline.prototype.rangeCollector = function (a, b) {
		const sums = new Map();
		const add = (key, frames, ns) => {
			const e = sums.get(key);
			if (e) e[0] += ns; else sums.set(key, [ns, frames]);
		};
		const res = this.data.resolution_ns;
		for (const th of this.threads) {
			const s = th.spans;
			for (let i = 0; i < s.length; i += 5) {
				const ns = Math.min(s[i] + s[i + 1], b) - Math.max(s[i], a);
				if (ns <= 0) continue;
				const stack = s[i + 4] >= 0 ? this.data.stacks[s[i + 4]] : [];
				add(s[i + 3] + ":" + s[i + 4], [s[i + 3], ...stack], ns);
			}
			const c = th.columns;
			for (let i = 0; i < c.length; i += 9) {
				const c0 = c[i] * res, part = (Math.min(c0 + res, b) - Math.max(c0, a)) / res;
				if (part <= 0) continue;
				for (let k = 0; k < 8; k++)
					if (c[i + 1 + k]) add("c" + k, [this.data.class_frames[k], this.data.short_frame], c[i + 1 + k] * part);
			}
		}
		const stacks = [];
		for (const [ns, frames] of sums.values()) stacks.push([Math.round(ns), Math.round(ns), ...frames]);
		return { name: "wall-selection", title: "Wall-clock flame graph of the selection, " + formatNs(a) + " to " + formatNs(b),
			time_unit: "ns", weight: 1, count_unit: "ns", stacks };
	};

	Timeline.prototype.select = function (range) {
		this.selection = range;
		this.flameHolder.replaceChildren();
		this.selectionFlame = null;
		if (range) {
			const c = this.rangeCollector(range[0], range[1]);
			if (c.stacks.length) {
				this.selectionFlame = new FlameGraph(c, -1);
				this.flameHolder.appendChild(this.selectionFlame.element);
				this.selectionFlame.draw();
			}
		}
		this.draw();
	};

	/* ---- the page ---- */

	const body = document.body;
	const file = report.meta.file;
	body.appendChild(drawHeader(report, diffMode ? "sigprof diff: " + baseReport.meta.file + " -> " + file : "sigprof report of " + file));
	if (!diffMode && report.summary) body.appendChild(drawSummary(report));
	if (baseReport) body.appendChild(drawHeader(baseReport, "base: " + baseReport.meta.file));
	const timelineElement = document.getElementById("sigprof-timeline");
	const timelineData = timelineElement ? JSON.parse(timelineElement.textContent) : null;
	const timeline = timelineData ? new Timeline(timelineData) : null;
	if (timeline) {
		body.appendChild(timeline.element);
		timeline.draw();
		window.addEventListener("resize", () => timeline.draw());
	}
	const flames = [];
	const flameSection = el("section", { id: "flames" });
	body.appendChild(flameSection);
	flameData.collectors.forEach((c, i) => {
		if (!c.stacks.length) return;
		const fg = new FlameGraph(c, i);
		flames.push(fg);
		flameSection.appendChild(fg.element);
	});
	body.appendChild(drawPaths(report));
	const skip = new Set(["version", "meta", "paths", "summary", "functions", "stacks", "timeline"]);
	for (const k in report) if (!skip.has(k)) body.appendChild(drawSection(k, report[k]));
	body.appendChild(drawFunctions(report));
	const hashSearch = /^#search=(.*)$/.exec(location.hash);
	for (const fg of flames) {
		if (hashSearch) {
			fg.searchBox.value = decodeURIComponent(hashSearch[1]);
			fg.search = fg.searchBox.value;
		}
		fg.setSearch(fg.search);
	}
	/* "#select=FROM,TO" (ms from the first thread's start) selects that range of the timeline */
	const hashSelect = /^#select=([\d.]+),([\d.]+)$/.exec(location.hash);
	if (timeline && hashSelect) timeline.select([Number(hashSelect[1]) * 1e6, Number(hashSelect[2]) * 1e6]);
	const loadMs = performance.now() - started;
	body.dataset.loadMs = loadMs.toFixed(1);

	window.sigprof = { report, flameData, flames, timeline, loadMs };

	/* ---- #selftest: what the browser test reads back ---- */
	function selftest() {
		const out = { load_ms: loadMs, mode: flameData.mode, collectors: [], header: {} };
		for (const tr of document.querySelectorAll("#header tr"))
			out.header[tr.querySelector("th").textContent] = tr.querySelector("td").textContent;
		for (const fg of flames) {
			const r = { name: fg.collector.name, drawn: fg.canvas.querySelectorAll(".frame").length,
				samples: fg.root.v[diffMode ? 2 : 0], weight: fg.root.v[diffMode ? 3 : 1],
				marked: fg.canvas.querySelectorAll(".frame.mark").length, title: fg.element.querySelector("h2").textContent,
				weight_index: fg.weight,
				kernel: fg.canvas.querySelectorAll(".frame.kernel").length };
			if (diffMode) { r.base_samples = fg.root.v[0]; r.grew = 0; r.shrank = 0;
				for (const d of fg.canvas.querySelectorAll(".frame")) {
					const m = /hsl\((\d+)/.exec(d.style.background) || /rgb\((\d+), (\d+), (\d+)/.exec(d.style.background);
					if (m && m.length === 4) { if (+m[1] > +m[3] + 20) r.grew++; else if (+m[3] > +m[1] + 20) r.shrank++; }
				}
			}
			/* search: the leaf of the heaviest path, wide enough to be drawn, to have something to find */
			const heaviest = (node) => [...node.ch.values()].reduce((a, b) => (fg.value(b) > fg.value(a) ? b : a));
			let leafward = fg.root.ch.size ? heaviest(fg.root) : null;
			while (leafward && leafward.ch.size) leafward = heaviest(leafward);
			if (leafward) {
				const term = flameData.frames[leafward.f][0];
				const t0 = performance.now();
				fg.setSearch(term);
				r.search_ms = performance.now() - t0;
				r.search = { term, highlighted: fg.canvas.querySelectorAll(".frame.match").length, total: fg.matchTotal,
					dataset_total: Number(fg.element.dataset.matchTotal) };
				fg.setSearch("");
			}
			/* zoom: click the widest frame of the second level and check that it fills the width */
			const target = [...fg.canvas.querySelectorAll(".frame")].filter((d) => d.node.depth === 2)
				.sort((a, b) => parseFloat(b.style.width) - parseFloat(a.style.width))[0];
			if (target) {
				const before = parseFloat(target.style.width);
				const node = target.node;
				const t0 = performance.now();
				target.dispatchEvent(new MouseEvent("click", { bubbles: true }));
				r.zoom_ms = performance.now() - t0;
				const after = [...fg.canvas.querySelectorAll(".frame")].find((d) => d.node === node);
				if (after) after.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
				r.zoom = { name: fg.name(node), width_before: before, width_after: after ? parseFloat(after.style.width) : 0,
					canvas_width: fg.canvas.clientWidth, zoomed: fg.zoom === node, info: fg.info.textContent };
				fg.zoomTo(fg.root);
			}
			out.collectors.push(r);
		}
		/* the tables as people read them: each section's title and its column labels, and whether the page fits */
		out.sections = [...document.querySelectorAll("section[data-section]")].map((sec) => ({
			key: sec.dataset.section, title: sec.querySelector("h2").textContent,
			labels: [...sec.querySelectorAll("th")].map((th) => th.textContent) }));
		out.paths_labels = [...document.querySelectorAll("#paths th")].map((th) => th.textContent);
		out.findings = [...document.querySelectorAll("table.findings tr")].slice(1).map((tr) => tr.children[1].textContent);
		/* the timeline: per row the ns and the pixels per class the whole view shows; a selection of the middle half */
		if (timeline) {
			const tl = { rows: timeline.threads.length, length_ns: timeline.data.length_ns, origin_ns: timeline.data.origin_ns,
				resolution_ns: timeline.data.resolution_ns, plot_width: timeline.plotWidth(), classes: timeline.data.classes,
				spans_drawn: timeline.drawnSpans, columns_drawn: timeline.drawnColumns, threads: [] };
			timeline.threads.forEach((th, i) => tl.threads.push({ tid: th.tid, pid: th.pid, comm: th.comm, start: th.start, end: th.end,
				ns: timeline.rowNs[i], px: timeline.rowPx[i], marks: th.marks.length }));
			const a = Math.round(timeline.data.length_ns / 4), b = Math.round(timeline.data.length_ns * 3 / 4);
			const t0 = performance.now();
			timeline.select([a, b]);
			tl.select_ms = performance.now() - t0;
			const sf = timeline.selectionFlame;
			tl.selection = { from: a, to: b, total_ns: sf ? sf.value(sf.root) : 0,
				drawn: sf ? sf.canvas.querySelectorAll(".frame").length : 0,
				title: sf ? sf.element.querySelector("h2").textContent : "" };
			timeline.zoomTo(a, b);
			tl.zoomed = { view: timeline.view.slice(), ns: timeline.rowNs.map((r) => r.reduce((x, y) => x + y, 0)) };
			/* hover the middle of the longest span of the second row (a worker's, where there is one) */
			const th = timeline.threads[tl.threads.length > 1 ? 1 : 0];
			let longest = -1;
			for (let i = 0; i < th.spans.length; i += 5) if (longest < 0 || th.spans[i + 1] > th.spans[longest + 1]) longest = i;
			tl.hover = longest < 0 ? "" : timeline.describe(th, th.spans[longest] + th.spans[longest + 1] / 2);
			timeline.zoomTo(0, timeline.data.length_ns);
			timeline.select(null);
			out.timeline = tl;
		}
		out.page_width = document.documentElement.scrollWidth;
		out.window_width = document.documentElement.clientWidth;
		const pre = el("pre", { id: "selftest" }, JSON.stringify(out));
		body.appendChild(pre);
	}
	if (location.hash === "#selftest") selftest();
})();
