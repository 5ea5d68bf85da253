// What every part of the page shares: building elements (text always as text, never as markup), the
// HTTP API, and the seat tokens this browser keeps.

import {refusal} from "./i18n.js";

export const $ = (id) => document.getElementById(id);

/** A new element: attributes (`on…` are listeners, `style` an object), then its children (text or nodes). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "style") Object.assign(node.style, value);
    else if (value === true) node.setAttribute(key, "");
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** GET `path`, or POST `body` as JSON; the answer, or an Error with the server's one message in the page's
 * language (and `status` and `code`). */
export async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) {
    const said = refusal({code: data.code, message: data.error, params: data.params});
    throw Object.assign(new Error(said), {status: response.status, code: data.code});
  }
  return data;
}

// A seat's token is kept in this browser (localStorage), per table: a reload or a dropped connection
// resumes the seat. A link ending in #seat=N.TOKEN hands a seat to another device.

export function tokens(code) {
  try {
    return JSON.parse(localStorage.getItem(`dicecup:${code}`)) || {};
  } catch (error) {
    return {};
  }
}

export function keepToken(code, seat, token) {
  const all = tokens(code);
  all[seat] = token;
  localStorage.setItem(`dicecup:${code}`, JSON.stringify(all));
  const codes = myTables().filter((c) => c !== code);
  localStorage.setItem("dicecup:tables", JSON.stringify([code, ...codes].slice(0, MY_TABLES)));
}

const MY_TABLES = 20;

/** The tables this browser holds a seat at, the latest first. */
export function myTables() {
  try {
    const codes = JSON.parse(localStorage.getItem("dicecup:tables"));
    return Array.isArray(codes) ? codes.filter((c) => /^[A-Za-z0-9_-]{16}$/.test(c)) : [];
  } catch (error) {
    return [];
  }
}

/** Forget a table (the server no longer has it). */
export function forgetTable(code) {
  localStorage.setItem("dicecup:tables", JSON.stringify(myTables().filter((c) => c !== code)));
  localStorage.removeItem(`dicecup:${code}`);
}

/** True when the person asked their system for less motion. */
export function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}
