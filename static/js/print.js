// The « Imprimer » buttons: shown only where JavaScript runs (the browser's own print works everywhere).
document.querySelectorAll("[data-print]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () { window.print(); });
});

// The running header of the printed pages (print.css): the casino, the book and its period, read from the page's
// data-print-header and handed to the @page margin box as a CSS string (CSSOM, allowed by the strict CSP).
(function () {
  var source = document.querySelector("[data-print-header]");
  if (!source) { return; }
  var text = source.getAttribute("data-print-header").replace(/\s+/g, " ").trim();
  var css = '"' + text.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
  document.documentElement.style.setProperty("--print-header", css);
})();
