// The anima dashboard: live state over /ws, commands over the REST API. No build step.
import { Recorder } from "./recorder.js";
import { BodyView, HumanoidFigure } from "./body.js";

const token = new URLSearchParams(location.search).get("token");
const $ = (id) => document.getElementById(id);
const LOG_LIMIT = 300;

let body = null;        // the hello message's body: channels with limits and roles
let roles = {};         // role → channel
let latest = null;      // the newest state message, drawn on the next animation frame
let bars = [];          // per channel: {fill, val}
let received = 0;       // state messages since the last rate count
let hello = null;       // the last hello message: the first line of a recording
const recorder = new Recorder();
const bodyView = new BodyView($("bodyview"), $("body-caption"));
let humanoidFigure = null;

// ------------------------------------------------------------------ commands
async function post(path, payload) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const init = { method: "POST", headers };
  if (payload !== undefined) init.body = JSON.stringify(payload);
  try {
    const r = await fetch(`/api/${path}`, init);
    if (r.status !== 202) {
      const reply = await r.json().catch(() => ({ reason: r.statusText }));
      toast(`${path}: ${reply.reason ?? r.status}`);
      // a robot command refused at execution (409) also comes as a command_rejected event,
      // which the log shows: one line, not two (the humanoid's refusals come only here)
      const event = r.status === 409 && !path.startsWith("humanoid/");
      if (!event) logLine("error", `${path} refused: ${reply.reason ?? r.status}`);
    }
  } catch (e) {
    toast(`${path}: ${e}`);
  }
}

function toast(text) {
  const el = $("toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, 4000);
}

$("speak-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("speak-text").value.trim();
  if (text) post("speak", { text, locale: $("speak-locale").value.trim() || "en-US" });
});
$("stop-speak").addEventListener("click", () => post("stop_speak"));
$("estop-btn").addEventListener("click", () => post("estop"));
$("reset-btn").addEventListener("click", () => post("reset"));
$("stop-anim").addEventListener("click", () => post("stop_animation"));
$("pad").addEventListener("click", (e) => {
  const box = $("pad").getBoundingClientRect();
  const px = ((e.clientX - box.left) / box.width) * 2 - 1;   // -1 (left) … 1 (right)
  const py = ((e.clientY - box.top) / box.height) * 2 - 1;   // -1 (up) … 1 (down)
  $("pad-dot").setAttribute("cx", px.toFixed(3));
  $("pad-dot").setAttribute("cy", py.toFixed(3));
  // the viewer faces the robot: their right is the robot's left (+y); up is +z
  post("look_at", { x: 1.0, y: +(px * 0.8).toFixed(3), z: +(-py * 0.6).toFixed(3) });
});

function buttons(container, names, action) {
  container.replaceChildren(...names.map((name) => {
    const b = document.createElement("button");
    b.textContent = name;
    b.dataset.name = name;
    b.addEventListener("click", () => action(name));
    return b;
  }));
}

// ------------------------------------------------------------------ live view
function setup(hello) {
  body = hello.body;
  roles = {};
  for (const c of body.channels) if (!(c.role in roles)) roles[c.role] = c;
  const rows = body.channels.map((c) => {
    const row = document.createElement("div");
    row.className = "channel";
    row.dataset.channel = c.name;
    row.title = `${c.name} (${c.role}) ${c.min}–${c.max}, rest ${c.default}`;
    const name = Object.assign(document.createElement("span"), { className: "name", textContent: c.name });
    const bar = Object.assign(document.createElement("div"), { className: "bar" });
    const fill = Object.assign(document.createElement("div"), { className: "fill" });
    const def = Object.assign(document.createElement("div"), { className: "def" });
    def.style.left = `${frac(c, c.default) * 100}%`;
    bar.append(fill, def);
    const val = Object.assign(document.createElement("span"), { className: "val" });
    row.append(name, bar, val);
    return { row, fill, val };
  });
  bars = rows;
  $("channels").replaceChildren(...rows.map((r) => r.row));
  bodyView.setup(body);
  // the face only for a body with a face (eyes, lids or lips); the body view draws the rest
  $("face").style.display = body.channels.some((c) => /^(eyes|eyelids|lips)/.test(c.role)) ? "" : "none";
  buttons($("gestures"), hello.animations.gestures, (name) => post("animation", { name }));
  buttons($("postures"), hello.animations.postures, (name) => post("look_at_target", { name }));
  // a body with no gaze postures (Reachy Mini) shows no empty heading
  $("postures-heading").hidden = $("postures").hidden = hello.animations.postures.length === 0;
}

function frac(c, v) {
  return c.max > c.min ? Math.min(1, Math.max(0, (v - c.min) / (c.max - c.min))) : 0;
}

function radians(role, values, fallbackRange = 0.6) {
  const c = roles[role];
  if (!c) return 0;
  const v = values[c.index];
  if (c.calibration) return (v - c.calibration.zero) * c.calibration.rad_per_unit;
  return ((v - c.default) / ((c.max - c.min) / 2 || 1)) * fallbackRange;
}

function level(role, values) {  // 0 at the channel's rest value … 1 at the far end of its range
  const c = roles[role];
  if (!c) return 0;
  const rest = c.default, far = Math.abs(c.max - rest) >= Math.abs(c.min - rest) ? c.max : c.min;
  return Math.min(1, Math.max(0, (values[c.index] - rest) / (far - rest || 1)));
}

function openness(role, values) {  // eyelids: 1 open as at rest (or wider) … 0 at the closed value
  const c = roles[role];
  if (!c) return 1;
  const shut = c.closed ?? c.min;
  return Math.min(1, Math.max(0, (values[c.index] - shut) / (c.default - shut || 1)));
}

function drawFace(values) {
  const yaw = radians("neck.yaw", values), pitch = radians("neck.pitch", values);
  const roll = radians("neck.roll", values);
  const deg = (r) => (r * 180) / Math.PI;
  // turn: features slide sideways (the viewer's right is the robot's left); tilt: rotate
  $("head").setAttribute("transform", `rotate(${(-deg(roll)).toFixed(2)})`);
  $("features").setAttribute(
    "transform", `translate(${(Math.sin(yaw) * 60).toFixed(2)} ${(-Math.sin(pitch) * 60).toFixed(2)})`);
  const ex = Math.sin(radians("eyes.yaw", values)) * 28, ey = -Math.sin(radians("eyes.pitch", values)) * 28;
  for (const id of ["pupil-r", "pupil-l"]) {
    $(id).setAttribute("cx", Math.max(-14, Math.min(14, ex)).toFixed(2));
    $(id).setAttribute("cy", Math.max(-8, Math.min(8, ey)).toFixed(2));
  }
  const open = openness("eyelids", values);  // the resting face: eyes open, mouth closed
  for (const id of ["lid-r", "lid-l"]) $(id).setAttribute("height", (32 * (1 - open)).toFixed(2));
  const mouthOpen = level("lips.open", values), wide = level("lips.wide", values);
  const narrow = level("lips.narrow", values);
  $("mouth").setAttribute("ry", (3 + mouthOpen * 22).toFixed(2));
  $("mouth").setAttribute("rx", (28 + wide * 14 - narrow * 12).toFixed(2));
}

function pill(id, text, cls) {
  const el = $(id);
  el.textContent = text;
  el.className = `pill ${cls}`;
}

function draw() {
  requestAnimationFrame(draw);
  const s = latest;
  if (!s || !body) return;
  latest = null;
  drawFace(s.values);
  bodyView.draw(s.values, s.measured);
  for (let i = 0; i < bars.length; i++) {
    const c = body.channels[i], v = s.values[i];
    bars[i].fill.style.width = `${frac(c, v) * 100}%`;
    bars[i].val.textContent = v.toFixed(1);
  }
  $("rate").textContent = s.loop.rate_hz.toFixed(1);
  $("jitter").textContent = s.loop.period_error_p99_ms.toFixed(2);
  $("move").textContent = s.move ?? "idle";
  $("gaze").textContent = s.gaze_target ?? (s.looking ? "point" : "–");
  pill("driver", s.driver_connected ? "driver connected" : "driver DISCONNECTED", s.driver_connected ? "ok" : "bad");
  pill("speaking", s.speaking ? "speaking" : "silent", s.speaking ? "on" : "");
  // the voice agent's phase (idle, engaged, listening, thinking, speaking, interrupted, sleeping)
  const phase = s.conversation;
  if (Boolean(phase) !== hasAgent) {  // the agent came or went: show its persona now
    hasAgent = Boolean(phase);
    pollPersona();
  }
  $("phase").textContent = phase ?? "no agent";
  pill("conversation", phase ? `agent ${phase}` : "no agent", phase && phase !== "idle" && phase !== "sleeping" ? "on" : "");
  pill("estop", s.estop ? "ESTOP" : "estop off", s.estop ? "bad" : "");
  document.body.classList.toggle("estopped", s.estop);
  drawHumanoid(s.humanoid);
  drawAttention(s.attention);
}

// social attention (docs/attention.md): people and voices seen from above, forward up, the
// robot's left to the left; the camera's newest frame with its faces boxed, twice a second
const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}
function ahead(deg, r) {  // azimuth (degrees, positive left) → the plot's x, y
  const a = (deg * Math.PI) / 180;
  return [-r * Math.sin(a), -r * Math.cos(a)];
}
function drawAttention(a) {
  const panel = $("attention-panel");
  panel.hidden = !a;
  if (!a) return;
  const target = a.target === "person" ? `person ${a.person}` : a.target;
  $("attention-caption").textContent = `${target}: ${a.reason}`;
  const plot = $("polar");
  plot.replaceChildren(
    svg("path", { d: "M -1 0 A 1 1 0 0 1 1 0", class: "polar-rim" }),
    svg("circle", { cx: 0, cy: 0, r: 0.06, class: "polar-robot" }),
  );
  const ray = (deg, cls) => {
    const [x, y] = ahead(deg, 1);
    plot.append(svg("line", { x1: 0, y1: 0, x2: x, y2: y, class: cls }));
  };
  if (a.voice_azimuth_deg !== null) ray(a.voice_azimuth_deg, "polar-voice");
  if (a.azimuth_deg !== null) ray(a.azimuth_deg, "polar-aim");
  for (const p of a.people) {
    const [x, y] = ahead(p.azimuth_deg, Math.min(1, 0.35 + p.distance_m / 4));
    const looked = a.target === "person" && a.person === p.id;
    plot.append(svg("circle", {
      cx: x, cy: y, r: 0.07,
      class: `polar-person${looked ? " looked" : ""}${p.speaking ? " speaking" : ""}${p.visible ? "" : " unseen"}`,
    }));
    const label = svg("text", { x, y: y - 0.1, class: "polar-label" });
    label.textContent = `${p.id}${p.facing ? " ◉" : ""}`;
    plot.append(label);
  }
}
let cameraUrl = null;
async function refreshCamera() {
  const panel = $("attention-panel");
  if (!panel.hidden) {
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    const r = await fetch("/api/vision/frame.jpg", { headers }).catch(() => null);
    const img = $("camera");
    img.hidden = !(r && r.ok);
    if (r && r.ok) {
      const url = URL.createObjectURL(await r.blob());
      img.src = url;
      if (cameraUrl) URL.revokeObjectURL(cameraUrl);
      cameraUrl = url;
    }
  }
  setTimeout(refreshCamera, 500);
}
refreshCamera();

let humanoidSetup = false;
async function setupHumanoidControls() {  // posture sliders bounded by the documented ranges
  humanoidSetup = true;
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const r = await fetch("/api/humanoid/ranges", { headers }).then((x) => x.json()).catch(() => null);
  if (!r) return;
  const box = $("h-posture");
  box.replaceChildren();
  for (const [axis, [lo, hi]] of Object.entries(r.posture)) {
    const label = Object.assign(document.createElement("label"), { textContent: `${axis} ` });
    const input = Object.assign(document.createElement("input"), {
      type: "range", min: lo, max: hi, step: (hi - lo) / 100, value: Math.min(Math.max(0, lo), hi), id: `h-${axis}`,
    });
    label.append(input);
    box.append(label);
  }
  $("h-mode-btn").addEventListener("click", () => post("humanoid/mode", { mode: $("h-mode").value }));
  $("h-posture-btn").addEventListener("click", () => post("humanoid/posture", Object.fromEntries(
    ["pitch", "roll", "yaw", "height"].map((k) => [k, +$(`h-${k}`).value]))));
  // walking (in Walk or Run): forward m/s and turn rad/s until Halt; the robot refuses otherwise
  $("h-walk-btn").addEventListener("click", () =>
    post("humanoid/speed", { x: +$("h-walk-x").value, y: 0, yaw: +$("h-walk-yaw").value }));
  $("h-halt-btn").addEventListener("click", () => post("humanoid/speed", { x: 0, y: 0, yaw: 0 }));
}

function drawHumanoidControls(h) {  // only what the robot would accept now
  const modes = h.mode_enable_list ?? [];
  const sel = $("h-mode");
  if (sel.dataset.modes !== modes.join()) {
    sel.dataset.modes = modes.join();
    sel.replaceChildren(...modes.map((m) => Object.assign(document.createElement("option"), { value: m, textContent: m })));
  }
  const motions = h.motion_enable_list ?? [];
  const box = $("h-motions");
  if (box.dataset.motions !== motions.join()) {
    box.dataset.motions = motions.join();
    box.replaceChildren(...motions.map((m) => {
      const b = Object.assign(document.createElement("button"), { textContent: m });
      b.addEventListener("click", () => post("humanoid/motion", { motion: m }));
      return b;
    }));
  }
}

function drawHumanoid(h) {  // state, and controls limited to the robot's enable lists
  $("humanoid").hidden = !h;
  if (!h) return;
  if (!humanoidSetup) setupHumanoidControls();
  drawHumanoidControls(h);
  humanoidFigure ??= new HumanoidFigure($("humanoid-figure"));
  humanoidFigure.draw(h);
  const fmt = (v) => (Array.isArray(v) ? v.map((x) => (+x).toFixed(2)).join(", ") : String(v ?? "–"));
  const rows = [["mode", h.fsm], ["motion", h.motion || "–"], ["posture (pitch, roll, yaw, height)", h.posture],
    ["velocity (x, y, yaw)", h.velocity], ["balance", h.balance], ["control", h.control_mode], ["error", h.error || "–"]];
  $("humanoid-state").replaceChildren(...rows.flatMap(([k, v]) => [
    Object.assign(document.createElement("dt"), { textContent: k }),
    Object.assign(document.createElement("dd"), { textContent: fmt(v) }),
  ]));
}

// ------------------------------------------------------------------ events
function describe(e) {
  switch (e.kind) {
    case "start_speak": return ["speech", `start speak ${e.utterance}: “${e.text}” (${e.locale})`];
    case "end_speak": return ["speech", `end speak ${e.utterance}: ${e.reason}`];
    case "move_started": return ["move", `animation ${e.name} started (${e.duration.toFixed(2)} s)`];
    case "move_finished": return ["move", `animation ${e.name} ${e.cut ? `cut: ${e.reason}` : "done"}`];
    case "command_rejected": return ["error", `${e.source} ${e.command} refused: ${e.reason}`];
    case "engine_fault": return ["error", `fault in ${e.source}: ${e.reason}`];
    case "estop": return ["error", e.active ? "EMERGENCY STOP" : "emergency stop released"];
    case "notice": return ["", `${e.source}: ${e.message}`];
    case "asr": return ["agent", `heard${e.final ? "" : " (partial)"}: ${e.text}`];
    case "wake": return ["agent", `wake (${e.source}) ${e.phrase}`];
    case "conversation": return ["agent", `${e.previous} → ${e.state}: ${e.reason}`];
    case "listen_timeout": return ["agent", `listening ended: ${e.reason}`];
    case "plan_started": return ["agent", `plan ${e.plan}: ${e.steps.join("; ")}`];
    case "plan_finished": return ["agent", `plan ${e.plan} ${e.outcome} ${e.feedback}`];
    case "action_status": return ["agent", `plan ${e.plan} step ${e.index} ${e.step}: ${e.status} ${e.message}`];
    default: return ["", `${e.kind} ${JSON.stringify(e)}`];
  }
}

// ------------------------------------------------------------------ transcript
// what the person said (a partial grows in place until its final) and what the robot said
function transcriptLine(e) {
  const list = $("transcript");
  let li = list.querySelector("li.partial");
  if (e.kind === "asr") {
    if (!li) li = list.appendChild(Object.assign(document.createElement("li"), { className: "person partial" }));
    li.textContent = e.text;
    if (e.final) li.classList.remove("partial");
  } else if (e.kind === "start_speak") {
    li = list.appendChild(Object.assign(document.createElement("li"), { className: "robot", textContent: e.text }));
    li.dataset.utterance = e.utterance;
  } else if (e.kind === "end_speak" && e.reason !== "done") {
    const said = list.querySelector(`li[data-utterance="${CSS.escape(e.utterance)}"]`);
    if (said) { said.classList.add("cut"); said.title = e.reason; }
  } else if (e.kind === "conversation") {
    $("phase").textContent = e.state;
    return;
  } else return;
  while (list.childElementCount > 50) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

function clockTime(d) {  // 14:03:07.250
  const two = (n) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

function logLine(cls, text, t) {
  const li = document.createElement("li");
  li.className = cls;
  li.dataset.kind = cls;
  // the time of day it arrived (the runtime's own clock, seconds since it started, on hover)
  const stamp = Object.assign(document.createElement("span"), { className: "t",
    textContent: clockTime(new Date()), title: t !== undefined ? `runtime t = ${t.toFixed(3)} s` : "" });
  li.append(stamp, text);
  const log = $("log");
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.append(li);
  while (log.childElementCount > LOG_LIMIT) log.firstElementChild.remove();
  if (atBottom) log.scrollTop = log.scrollHeight;
}

// ------------------------------------------------------------------ connection
function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const query = token ? `?token=${encodeURIComponent(token)}` : "";
  const ws = new WebSocket(`${scheme}://${location.host}/ws${query}`);
  ws.onopen = () => pill("link", "live", "ok");
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.type === "hello") hello = msg;
    else if (!recorder.add(msg)) stopRecording();
    if (msg.type === "state") { latest = msg; received++; }
    else if (msg.type === "hello") setup(msg);
    else if (msg.type === "event") {
      const [cls, text] = describe(msg);
      logLine(cls, text, msg.t || undefined);
      const last = $("log").lastElementChild;
      if (last) last.dataset.kind = msg.kind;
      transcriptLine(msg);
    }
  };
  ws.onclose = () => {
    pill("link", "disconnected: retrying", "bad");
    setTimeout(connect, 1000);
  };
}

// ------------------------------------------------------------------ recording
function stopRecording() {
  const seconds = recorder.seconds();
  const counts = `${recorder.states} states, ${recorder.events} events`;
  const blob = recorder.stop();
  const save = $("rec-save");
  if (save.href) URL.revokeObjectURL(save.href);
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  Object.assign(save, { href: URL.createObjectURL(blob), download: `anima-session-${stamp}.jsonl`, hidden: false });
  $("rec-btn").textContent = "● Record";
  $("rec-status").textContent = `${seconds.toFixed(1)} s, ${counts}`;
}

$("rec-btn").addEventListener("click", () => {
  if (recorder.active) return stopRecording();
  if (!hello) return toast("record: not connected yet");
  recorder.start(hello);
  $("rec-btn").textContent = "■ Stop";
  $("rec-save").hidden = true;
});

setInterval(() => {
  $("ups").textContent = String(received);
  received = 0;
  if (recorder.active) {
    $("rec-status").textContent = `recording ${recorder.seconds().toFixed(0)} s, ${recorder.states} states`;
  }
}, 1000);
// the health (GET /api/health) every 2 s: ok, or its warnings (the first shown, all on hover).
// A click dismisses the warnings shown (kept for this browser until the robot restarts, so a
// standing one such as "no sound card" is read once); a new warning shows again.
let healthShown = [];
const dismissedKey = "anima.health.dismissed";
function dismissed() {
  try { return JSON.parse(localStorage.getItem(dismissedKey) ?? "null") ?? { started: null, warnings: [] }; }
  catch { return { started: null, warnings: [] }; }
}
$("health").addEventListener("click", () => {
  const d = dismissed();
  localStorage.setItem(dismissedKey, JSON.stringify({ started: d.started, warnings: [...new Set([...d.warnings, ...healthShown])] }));
  pollHealth();
});
async function pollHealth() {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const h = await fetch("/api/health", { headers }).then((r) => (r.ok ? r.json() : null)).catch(() => null);
  if (!h) return;
  let d = dismissed();
  const started = Date.now() - h.uptime_s * 1000;  // when this run of the robot started
  if (d.started === null || Math.abs(d.started - started) > 5000) {  // another run: new again
    d = { started, warnings: [] };
    localStorage.setItem(dismissedKey, JSON.stringify(d));
  }
  const live = h.warnings.filter((w) => !d.warnings.includes(w));
  const hidden = h.warnings.length - live.length;
  healthShown = live;
  $("health").dataset.live = JSON.stringify(live);  // the warnings not dismissed (the pill shows the first)
  const n = live.length;
  const more = hidden ? ` (${hidden} dismissed)` : "";
  pill("health", n ? `${n} warning${n > 1 ? "s" : ""}: ${live[0]} ✕` : `health ok${more}`, n ? "bad" : "ok");
  $("health").title = n ? `${live.join("\n")}\n(click to dismiss)`
    : (hidden ? `dismissed:\n${h.warnings.join("\n")}` : `up ${h.uptime_s.toFixed(0)} s, ${h.speech}`);
  $("health").style.cursor = n ? "pointer" : "";
}
setInterval(pollHealth, 2000);
let hasAgent = false;  // the state names the agent's phase: only then are its persona and memory asked for
async function pollPersona() {  // who the voice agent is and what it remembers
  if (!hasAgent) {  // (asked without one, they answer 409, which browsers log as an error)
    $("persona-panel").hidden = true;
    return;
  }
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const get = (path) => fetch(path, { headers }).then((r) => (r.ok ? r.json() : null)).catch(() => null);
  const [p, m] = await Promise.all([get("/api/persona"), get("/api/memory?limit=1")]);
  $("persona-panel").hidden = !p;
  if (!p) return;
  $("persona-source").textContent = p.source;
  const dl = $("persona");
  dl.replaceChildren();
  const rows = [["name", p.name || "(agent.name)"], ["voice", p.voice || "(speech.engines)"],
    ["greeting", p.greeting], ["made by", p.made_by], ["offers", (p.actions || []).join(", ")],
    ["talks about", (p.talks_about || []).join("; ")], ["never", (p.never_talks_about || []).join("; ")]];
  for (const [k, v] of rows) {
    if (!v) continue;
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    dl.append(dt, dd);
  }
  const text = p.instructions || "";
  $("persona-text").textContent = text.length > 400 ? `${text.slice(0, 400)}…` : text;
  $("memory-count").textContent = m ? `${m.count} memor${m.count === 1 ? "y" : "ies"}` : "off";
  $("memory-person").textContent = (m && m.person) || "nobody named";
}
setInterval(pollPersona, 5000);
requestAnimationFrame(draw);
connect();
pollHealth();
