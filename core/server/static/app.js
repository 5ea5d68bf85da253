// The dicecup page: the lobby at /, a table at /t/CODE. Plain ES modules, no build step.

import {$} from "./dom.js";
import {LANGUAGES, language, loadLanguage, preferredLanguage, t, translatePage} from "./i18n.js";
import {lobby} from "./lobby.js";
import {review} from "./reviewing.js";
import {room} from "./room.js";
import {training} from "./training.js";

await loadLanguage(preferredLanguage()).catch(() => loadLanguage("en"));
translatePage();
document.title = t("app.title");
const picker = $("lang");
picker.replaceChildren(...Object.entries(LANGUAGES).map(([code, name]) => {
  const option = document.createElement("option");
  option.value = code;
  option.lang = code;
  option.textContent = name;
  option.selected = code === language();
  return option;
}));
picker.addEventListener("change", () => {
  localStorage.setItem("dicecup.lang", picker.value);
  location.reload(); // everything drawn again in the new language; seats are kept in this browser
});
const at = location.pathname.match(/^\/t\/([A-Za-z0-9_-]{16})(\/review)?$/);
if (location.pathname === "/train") {
  training().catch((error) => {
    $("train-message").textContent = error.message;
    $("train-message").className = "error";
  });
} else if (at && at[2]) {
  review(at[1]);
} else if (at) {
  room(at[1]);
} else {
  lobby().catch((error) => {
    $("lobby-message").textContent = error.message;
    $("lobby-message").className = "error";
  });
}
