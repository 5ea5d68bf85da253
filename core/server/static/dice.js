// A die as the page draws it: a button showing its pips (faces up to six) or its number, pressed when kept,
// in its face's colour where the variant colours faces (Kismet). The room and the trainer share it.

import {el} from "./dom.js";
import {t} from "./i18n.js";

const PIPS = {1: [5], 2: [3, 7], 3: [3, 5, 7], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9]};

/** The colour of `face` where the variant colours its faces, else null. */
export function colourOf(variant, face) {
  for (const [name, values] of Object.entries(variant.attributes)) {
    if (name.toLowerCase().startsWith("colo")) return String(values[face - 1]);
  }
  return null;
}

/** Die `i` showing `face`: `active` when it may be kept now, `kept`, its extra `classes`, `delay` (ms) of its
 * roll's animation when it rolls, `onclick` to keep or release it. */
export function dieButton(variant, i, face, {active, kept, classes = [], delay = null, onclick}) {
  const colour = colourOf(variant, face);
  const name = colour ? t("room.die.colour", {face, colour}) : String(face);
  const all = ["die", kept ? "kept" : "", ...classes, colour ? `colour-${colour}` : ""];
  return el("button", {
    type: "button", class: all.filter(Boolean).join(" "), "data-die": i, "data-face": face,
    "aria-pressed": active ? String(kept) : null, "aria-disabled": active ? null : "true",
    "aria-label": t(kept ? "room.dieKept" : "room.die", {n: i + 1, face: name}),
    style: delay === null ? {} : {animationDelay: `${delay}ms`},
    onclick,
  }, PIPS[face] && variant.faces <= 6 ? el("span", {class: "pips", "aria-hidden": "true"},
    ...Array.from({length: 9}, (_, k) => el("span", {class: PIPS[face].includes(k + 1) ? "pip on" : "pip"})))
    : el("span", {class: "number", "aria-hidden": "true"}, String(face)));
}
