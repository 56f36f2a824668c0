// The « Imprimer » buttons: shown only where JavaScript runs (the browser's own print works everywhere).
document.querySelectorAll("[data-print]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () { window.print(); });
});
