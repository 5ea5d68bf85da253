// A minimal WebSocket client (RFC 6455) on Node's own `http` and `crypto`: enough for the dicecup protocol
// (text messages, pings, close), with no npm package. Node 22 has a WebSocket built in; Node 20 has not.

import {createHash, randomBytes} from "node:crypto";
import {EventEmitter} from "node:events";
import http from "node:http";
import https from "node:https";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

export class WebSocketClient extends EventEmitter {
  // Events: "open", "message" (text), "close" (code), "error" (Error).
  constructor(url, {origin} = {}) {
    super();
    const target = new URL(url);
    const key = randomBytes(16).toString("base64");
    const client = target.protocol === "wss:" ? https : http;
    const headers = {Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": key};
    if (origin) headers.Origin = origin;
    const request = client.request({
      host: target.hostname, port: target.port || (target.protocol === "wss:" ? 443 : 80),
      path: target.pathname + target.search, headers,
    });
    request.on("upgrade", (response, socket, head) => {
      const expected = createHash("sha1").update(key + GUID).digest("base64");
      if (response.headers["sec-websocket-accept"] !== expected) {
        socket.destroy();
        this.emit("error", new Error("the server's handshake answer is not a WebSocket one"));
        return;
      }
      this.socket = socket;
      this.buffer = head;
      this.parts = [];
      socket.on("data", (chunk) => this.#read(chunk));
      socket.on("close", () => this.emit("close", this.closeCode ?? 1006));
      socket.on("error", (error) => this.emit("error", error));
      this.emit("open");
      if (head.length) this.#read(Buffer.alloc(0));
    });
    request.on("response", (response) => this.emit("error", new Error(`the server refused the WebSocket: HTTP ${response.statusCode}`)));
    request.on("error", (error) => this.emit("error", error));
    request.end();
  }

  send(text) {
    this.#frame(0x1, Buffer.from(text, "utf8"));
  }

  close(code = 1000) {
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.#frame(0x8, payload);
    this.socket.end();
  }

  #frame(opcode, payload) {
    // A client's frames are masked (RFC 6455, 5.3).
    const mask = randomBytes(4);
    const length = payload.length;
    const head = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    if (length < 126) head[1] = 0x80 | length;
    else if (length < 65536) { head[1] = 0x80 | 126; head.writeUInt16BE(length, 2); }
    else { head[1] = 0x80 | 127; head.writeBigUInt64BE(BigInt(length), 2); }
    const body = Buffer.alloc(length);
    for (let i = 0; i < length; i++) body[i] = payload[i] ^ mask[i % 4];
    this.socket.write(Buffer.concat([head, mask, body]));
  }

  #read(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 2) {
      const fin = (this.buffer[0] & 0x80) !== 0;
      const opcode = this.buffer[0] & 0x0f;
      let length = this.buffer[1] & 0x7f;
      let at = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return;
        length = this.buffer.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return;
        length = Number(this.buffer.readBigUInt64BE(2));
        at = 10;
      }
      if (this.buffer.length < at + length) return; // the rest of the frame is still on its way
      const payload = this.buffer.subarray(at, at + length);
      this.buffer = this.buffer.subarray(at + length);
      if (opcode === 0x8) {
        this.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        this.socket.end();
      } else if (opcode === 0x9) {
        this.#frame(0xa, payload); // a ping: answer it
      } else if (opcode === 0x1 || opcode === 0x0) {
        this.parts.push(Buffer.from(payload));
        if (fin) {
          const text = Buffer.concat(this.parts).toString("utf8");
          this.parts = [];
          this.emit("message", text);
        }
      }
    }
  }
}
