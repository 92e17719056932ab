// The whole body, drawn from the channel values the robot is sent (plain SVG, no build step).
//
// * Nadine (a body with her arm channels): the head, the torso and both arms, seen from the
//   front. The viewer faces the robot: its right arm is on the viewer's left.
// * Reachy Mini (a body with its head_x … body_yaw channels): its head in 6 DOF, the antennas
//   and the base, seen from the front, the side and above; what the daemon measured is drawn
//   as a dashed ghost over what it was sent.
// * Any other body: no drawing (the face and the channel bars still show it).
// The humanoid (Adam) is drawn by drawHumanoidFigure from its state: mode, posture, velocity.
const NS = "http://www.w3.org/2000/svg";
const RAD = Math.PI / 180;

function el(tag, attrs, parent) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs ?? {})) node.setAttribute(k, v);
  if (parent) parent.append(node);
  return node;
}

const f2 = (v) => (+v).toFixed(2);

// Nadine's arm channels have no calibration: a channel's units map to degrees as below, chosen
// so her library's gestures read as what they are (LOOKUP_Waving: the arm out and up, the
// forearm raised, the hand swinging on the wrist).
const ARM = {
  raise: (v) => ((v - 20) / 210) * 120,   // shoulder_pitch: 20 hangs, 230 is 120° out and up
  spread: (v) => (v - 60) * 0.25,         // shoulder_roll: out from the side
  flex: (v) => ((v - 20) / 200) * 120,    // elbow: 20 straight, 220 bent 120°
  wrist: (v) => (v - 128) * 0.8,          // wrist_yaw: the hand swings about the forearm
  grip: (v) => (v - 20) / 200,            // hand: 0 open … 1 closed
};

class NadineFigure {
  static fits(names) {
    return ["r_shoulder_pitch", "r_elbow", "l_shoulder_pitch", "l_elbow"].every((n) => names.has(n));
  }

  constructor(svg, channels) {
    this.index = Object.fromEntries(channels.map((c) => [c.name, c.index]));
    svg.setAttribute("viewBox", "-160 -175 320 300");
    this.torso = el("g", { id: "torso" }, svg);
    el("path", { class: "limb torso", d: "M-55 -60 L55 -60 L40 90 L-40 90 Z" }, this.torso);
    el("circle", { class: "joint", r: 6, cx: 0, cy: -68 }, this.torso);
    this.head = el("g", { id: "figure-head" }, this.torso);
    el("ellipse", { class: "skull", rx: 30, ry: 38, cx: 0, cy: -110 }, this.head);
    this.features = el("g", {}, this.head);
    for (const x of [-11, 11]) el("circle", { class: "pupil", r: 4, cx: x, cy: -115 }, this.features);
    el("path", { class: "nose", d: "M-8 -92 L8 -92" }, this.features);
    // side -1: the robot's right arm (the viewer's left); +1: its left
    this.arms = [["r", -1], ["l", 1]].map(([p, side]) => {
      const g = el("g", { id: `arm-${p}`, class: "arm" }, this.torso);
      return {
        p, side,
        upper: el("line", { class: "limb" }, g),
        fore: el("line", { class: "limb" }, g),
        elbow: el("circle", { class: "joint", r: 5 }, g),
        hand: el("ellipse", { class: "hand", id: `hand-${p}`, rx: 9, ry: 14 }, g),
      };
    });
  }

  v(values, name, fallback) {
    const i = this.index[name];
    return i === undefined ? fallback : values[i];
  }

  draw(values) {
    const yaw = (this.v(values, "torso_yaw", 128) - 128) * 0.6 * RAD;
    const lean = (this.v(values, "torso_pitch", 128) - 128) * 0.6 * RAD;
    // turning narrows the shoulders and shifts the middle; leaning forward shortens the torso
    this.torso.setAttribute("transform",
      `translate(${f2(Math.sin(yaw) * 20)} 0) scale(${f2(Math.cos(yaw))} ${f2(Math.cos(lean))})`);
    const neck = (name) => (this.v(values, name, 128) - 128) * 0.5;   // ° (calibrated: ~0.4–0.5°)
    this.head.setAttribute("transform", `rotate(${f2(-neck("neck_roll"))} 0 -68)`);
    this.features.setAttribute("transform",
      `translate(${f2(Math.sin(neck("neck_yaw") * RAD) * 20)} ${f2(-Math.sin(neck("neck_pitch") * RAD) * 20)})`);
    for (const a of this.arms) {
      const up = ARM.raise(this.v(values, `${a.p}_shoulder_pitch`, 40))
        + ARM.spread(this.v(values, `${a.p}_shoulder_roll`, 60));
      const flex = ARM.flex(this.v(values, `${a.p}_elbow`, 50));
      // screen angles (y down): hanging is 90°; the right arm rises through 180°, the left 0°
      const tu = (90 - a.side * up) * RAD;
      const tf = tu - a.side * flex * RAD;
      const sx = a.side * 55, sy = -55;
      const ex = sx + Math.cos(tu) * 58, ey = sy + Math.sin(tu) * 58;
      const hx = ex + Math.cos(tf) * 52, hy = ey + Math.sin(tf) * 52;
      for (const [line, x1, y1, x2, y2] of [[a.upper, sx, sy, ex, ey], [a.fore, ex, ey, hx, hy]]) {
        line.setAttribute("x1", f2(x1)); line.setAttribute("y1", f2(y1));
        line.setAttribute("x2", f2(x2)); line.setAttribute("y2", f2(y2));
      }
      a.elbow.setAttribute("cx", f2(ex));
      a.elbow.setAttribute("cy", f2(ey));
      const twist = ARM.wrist(this.v(values, `${a.p}_wrist_yaw`, 128));
      const grip = Math.min(1, Math.max(0, ARM.grip(this.v(values, `${a.p}_hand`, 30))));
      const along = (tf / RAD) - 90 + twist;
      a.hand.setAttribute("ry", f2(14 - grip * 5));
      a.hand.setAttribute("transform",
        `translate(${f2(hx + Math.cos(tf) * 10)} ${f2(hy + Math.sin(tf) * 10)}) rotate(${f2(along)})`);
      a.hand.dataset.angle = f2(along);
    }
  }
}

const REACHY = ["head_x", "head_y", "head_z", "head_roll", "head_pitch", "head_yaw",
  "antenna_right", "antenna_left", "body_yaw"];

class ReachyFigure {
  static fits(names) { return REACHY.every((n) => names.has(n)); }

  constructor(svg, channels) {
    this.index = Object.fromEntries(channels.map((c) => [c.name, c.index]));
    svg.setAttribute("viewBox", "0 0 450 190");
    // three views side by side, each: the commanded robot, and the measured one dashed over it
    this.views = [["front", 75], ["side", 225], ["top", 375]].map(([name, x]) => {
      const g = el("g", { transform: `translate(${x} 0)`, id: `reachy-${name}` }, svg);
      el("text", { class: "view-label", x: 0, y: 184, "text-anchor": "middle" }, g).textContent = name;
      return { name, sent: this.robot(name, g, "sent"), measured: this.robot(name, g, "measured") };
    });
  }

  robot(view, parent, kind) {
    const g = el("g", { class: `reachy ${kind}` }, parent);
    const parts = { g };
    if (view === "top") {
      parts.base = el("g", {}, g);
      el("circle", { class: "base", r: 45, cx: 0, cy: 95 }, parts.base);
      el("line", { class: "mark", x1: 0, y1: 95, x2: 0, y2: 50 }, parts.base);
      parts.head = el("g", {}, g);
      el("rect", { class: "head", x: -38, y: -24, width: 76, height: 48, rx: 18 }, parts.head);
      el("path", { class: "mark", d: "M-14 -24 L0 -38 L14 -24" }, parts.head);   // the face's side
    } else {
      el("path", { class: "base", d: "M-42 170 L-32 120 L32 120 L42 170 Z" }, g);
      parts.stripe = el("line", { class: "mark", x1: 0, y1: 124, x2: 0, y2: 166 }, g);
      el("line", { class: "neck", x1: 0, y1: 120, x2: 0, y2: 100 }, g);
      parts.head = el("g", {}, g);
      el("rect", { class: "head", x: -40, y: -26, width: 80, height: 52, rx: 22 }, parts.head);
      if (view === "front") {
        parts.eyes = el("g", {}, parts.head);
        for (const x of [-15, 15]) el("circle", { class: "lens", r: 8, cx: x, cy: -2 }, parts.eyes);
        parts.antennas = [-1, 1].map((side) => el("line", {
          class: "antenna", x1: side * 24, y1: -24, x2: side * 24, y2: -70,
        }, parts.head));
      } else {
        el("circle", { class: "lens", r: 7, cx: 34, cy: -2 }, parts.head);   // facing right
        el("line", { class: "antenna", x1: -4, y1: -24, x2: -4, y2: -70 }, parts.head);
      }
    }
    return parts;
  }

  // values: the body's units (128 the centre; 1 unit is 1 mm or 1°)
  pose(values) {
    const get = (n) => values[this.index[n]] - 128;
    return Object.fromEntries(REACHY.map((n) => [n, get(n)]));
  }

  place(view, parts, p) {
    const s = 1.4;   // px per mm
    if (view.name === "front") {   // the viewer's right is the robot's left (+y); up is +z
      parts.head.setAttribute("transform",
        `translate(${f2(p.head_y * s)} ${f2(72 - p.head_z * s)}) rotate(${f2(-p.head_roll)})`);
      parts.eyes.setAttribute("transform", `translate(${f2(Math.sin(p.head_yaw * RAD) * 18)} ${f2(Math.sin(p.head_pitch * RAD) * 8)})`);
      // antennas: 0° upright; the right one (viewer's left) and the left one mirrored
      parts.antennas[0].setAttribute("transform", `rotate(${f2(-p.antenna_right)} -24 -24)`);
      parts.antennas[1].setAttribute("transform", `rotate(${f2(p.antenna_left)} 24 -24)`);
      parts.stripe.setAttribute("transform", `translate(${f2(Math.sin(p.body_yaw * RAD) * 30)} 0)`);
    } else if (view.name === "side") {   // facing right: +x right, +z up; pitch down is clockwise
      parts.head.setAttribute("transform",
        `translate(${f2(p.head_x * s)} ${f2(72 - p.head_z * s)}) rotate(${f2(p.head_pitch)})`);
      parts.stripe.setAttribute("transform", `translate(${f2(Math.sin(p.body_yaw * RAD) * 30)} 0)`);
    } else {   // from above, facing up: +x up, +y (the robot's left) left; yaw counter-clockwise
      parts.base.setAttribute("transform", `rotate(${f2(-p.body_yaw)} 0 95)`);
      parts.head.setAttribute("transform",
        `translate(${f2(-p.head_y * s)} ${f2(60 - p.head_x * s)}) rotate(${f2(-p.head_yaw)})`);
    }
  }

  draw(values, measured) {
    const sent = this.pose(values);
    let seen = null;
    if (measured && measured.values) {
      const mixed = measured.values.map((v, i) => (v === null ? values[i] : v));
      seen = this.pose(mixed);
    }
    for (const view of this.views) {
      this.place(view, view.sent, sent);
      view.measured.g.style.display = seen ? "" : "none";
      if (seen) this.place(view, view.measured, seen);
    }
  }
}

export class BodyView {
  constructor(svg, caption) {
    this.svg = svg;
    this.caption = caption;
    this.figure = null;
  }

  setup(body) {   // the drawing that fits the body's channels, or none
    this.svg.replaceChildren();
    const names = new Set(body.channels.map((c) => c.name));
    const kind = [NadineFigure, ReachyFigure].find((k) => k.fits(names));
    this.figure = kind ? new kind(this.svg, body.channels) : null;
    this.svg.dataset.figure = kind ? (kind === NadineFigure ? "nadine" : "reachy_mini") : "";
    this.svg.closest(".panel").hidden = !this.figure;
  }

  draw(values, measured) {
    if (!this.figure) return;
    this.figure.draw(values, measured);
    if (!measured) { this.caption.textContent = ""; return; }
    const lag = measured.lag_ms === null ? "–" : `${measured.lag_ms.toFixed(0)} ms`;
    this.caption.textContent = `measured (dashed): lag ${lag}, off by ${measured.deviation.toFixed(1)}`
      + `${measured.worst && measured.deviation >= 0.5 ? ` at ${measured.worst}` : ""}`
      + `, ${measured.age_ms.toFixed(0)} ms old`;
  }
}

// ------------------------------------------------------------------ the humanoid
// From its state: the mode as a label, the posture (pitch, roll, yaw in rad, height in m)
// as the body from the side and the front, the velocity (x, y in m/s, yaw in rad/s) as an
// arrow on the ground seen from above.
export class HumanoidFigure {
  constructor(svg) {
    svg.setAttribute("viewBox", "0 0 330 170");
    this.mode = el("text", { class: "view-label mode", x: 165, y: 14, "text-anchor": "middle" }, svg);
    this.side = this.person(el("g", { transform: "translate(55 0)", id: "adam-side" }, svg), "side");
    this.front = this.person(el("g", { transform: "translate(165 0)", id: "adam-front" }, svg), "front");
    const top = el("g", { transform: "translate(275 85)", id: "adam-velocity" }, svg);
    el("circle", { class: "base", r: 40 }, top);
    this.arrow = el("line", { class: "arrow", x1: 0, y1: 0, x2: 0, y2: 0, id: "adam-arrow" }, top);
    this.turn = el("path", { class: "arrow", d: "" }, top);
    for (const [label, x] of [["side", 55], ["front", 165], ["velocity", 275]]) {
      el("text", { class: "view-label", x, y: 166, "text-anchor": "middle" }, svg).textContent = label;
    }
  }

  person(g, view) {
    const body = el("g", {}, g);
    el("line", { class: "limb", x1: 0, y1: 0, x2: 0, y2: -60 }, body);
    el("circle", { class: "skull", r: 14, cx: 0, cy: -76 }, body);
    return { view, legs: el("path", { class: "limb" }, g), body };
  }

  drawPerson(p, pitch, roll, height) {
    const leg = 62 + height * 250;   // height: m from the nominal stand (negative: crouched)
    const hip = 150 - leg;
    const bend = Math.max(0, -height) * 120;   // knees forward when crouched
    p.legs.setAttribute("d", p.view === "side"
      ? `M0 150 L${f2(bend)} ${f2(150 - leg / 2)} L0 ${f2(hip)}`
      : `M-12 150 L-12 ${f2(hip)} M12 150 L12 ${f2(hip)}`);
    const tilt = (p.view === "side" ? pitch : -roll) / RAD;
    p.body.setAttribute("transform", `translate(0 ${f2(hip)}) rotate(${f2(tilt)})`);
    p.body.dataset.tilt = f2(tilt);
  }

  draw(h) {
    const [pitch, roll, , height] = h.posture ?? [0, 0, 0, 0];
    const [vx, vy, vyaw] = h.velocity ?? [0, 0, 0];
    this.mode.textContent = `${h.fsm || "–"}${h.motion ? ` · ${h.motion}` : ""}`;
    this.drawPerson(this.side, pitch, roll, height);
    this.drawPerson(this.front, pitch, roll, height);
    // from above, facing up: +x up, +y (its left) left; 1 m/s is 60 px
    this.arrow.setAttribute("x2", f2(-vy * 60));
    this.arrow.setAttribute("y2", f2(-vx * 60));
    const r = 30, sweep = Math.max(-Math.PI, Math.min(Math.PI, vyaw));
    if (Math.abs(sweep) < 0.02) {
      this.turn.setAttribute("d", "");
    } else {   // an arc from straight ahead, counter-clockwise for a left turn (+yaw)
      const end = -Math.PI / 2 - sweep;
      this.turn.setAttribute("d",
        `M0 ${-r} A${r} ${r} 0 0 ${sweep > 0 ? 0 : 1} ${f2(Math.cos(end) * r)} ${f2(Math.sin(end) * r)}`);
    }
  }
}
