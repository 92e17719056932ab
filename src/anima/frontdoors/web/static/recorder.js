// Recording from the page: every WebSocket message (the hello, states, events) with `rt`, the
// seconds since the recording started — the JSON Lines of `anima record`, so `anima plot` reads
// the file the Save link gives. Kept in memory, so a recording stops itself after LIMIT_S.
export const LIMIT_S = 600;

export class Recorder {
  constructor() {
    this.lines = null;   // the JSON lines so far; null when not recording
    this.t0 = 0;
    this.states = 0;
    this.events = 0;
  }

  get active() { return this.lines !== null; }

  seconds() { return this.active ? (performance.now() - this.t0) / 1000 : 0; }

  start(hello) {  // the session begins with the body description, as `anima record` writes it
    this.t0 = performance.now();
    this.lines = [];
    this.states = this.events = 0;
    this.add(hello);
  }

  add(msg) {  // returns false once the limit is reached (the caller then stops)
    if (!this.active) return true;
    const rt = Math.round(this.seconds() * 1e4) / 1e4;
    this.lines.push(JSON.stringify({ ...msg, rt }));
    if (msg.type === "state") this.states++;
    else if (msg.type === "event") this.events++;
    return rt < LIMIT_S;
  }

  stop() {  // the recording as a JSON Lines file
    const blob = new Blob([this.lines.map((l) => l + "\n").join("")], { type: "application/x-ndjson" });
    this.lines = null;
    return blob;
  }
}
