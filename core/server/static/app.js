// The dicecup page: the lobby at /, a table at /t/CODE. Plain ES modules, no build step.

import {$} from "./dom.js";
import {setLanguage, t, translatePage} from "./i18n.js";
import {lobby} from "./lobby.js";
import {room} from "./room.js";

setLanguage("en");
translatePage();
document.title = t("app.title");
const at = location.pathname.match(/^\/t\/([A-Za-z0-9_-]{16})$/);
if (at) {
  room(at[1]);
} else {
  lobby().catch((error) => {
    $("lobby-message").textContent = error.message;
    $("lobby-message").className = "error";
  });
}
