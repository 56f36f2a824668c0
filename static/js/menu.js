// The « Plus » menu is a <details>: it opens and closes with the keyboard without any script. This only closes it
// with Escape (focus back on « Plus ») and when a click or the focus lands elsewhere, as a menu is expected to.
document.addEventListener("DOMContentLoaded", () => {
  const menu = document.querySelector(".topbar details.more");
  if (!menu) return;
  const close = () => { menu.open = false; };
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.open) {
      close();
      menu.querySelector("summary").focus();
    }
  });
  document.addEventListener("click", (event) => { if (!menu.contains(event.target)) close(); });
  document.addEventListener("focusin", (event) => { if (!menu.contains(event.target)) close(); });
});
