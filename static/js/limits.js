// Show the allowed range of each maximum (R12) as soon as the minimum is typed; the citation comes from the page
// (casino.rules, through data-article), never written here.
(function () {
  var form = document.getElementById("opening-form");
  if (!form) return;
  var minimum = form.querySelector("[data-limits-minimum]");
  var maxima = form.querySelectorAll("[data-limits-low]");
  function cents(value) { return Math.round(parseFloat(String(value).replace(",", ".")) * 100); }
  // « 16 000,00 € » with the narrow no-break space, as casino.web.formats.euros writes it on the server.
  var EUROS = new Intl.NumberFormat("fr-FR", { style: "currency", currency: "EUR" });
  function euros(c) { return EUROS.format(c / 100); }
  function update() {
    var min = cents(minimum.value);
    maxima.forEach(function (input) {
      var out = document.getElementById("range-" + input.name);
      if (!out) return;
      if (!(min > 0)) { out.textContent = "Indiquez d'abord le minimum."; return; }
      var low = min * parseInt(input.dataset.limitsLow, 10);
      var high = min * parseInt(input.dataset.limitsHigh, 10);
      input.min = (low / 100).toFixed(2);
      input.max = (high / 100).toFixed(2);
      out.textContent = "Autorisé : de " + euros(low) + " à " + euros(high) + " (" + form.dataset.article + ").";
      var value = cents(input.value);
      out.classList.toggle("error", value > 0 && (value < low || value > high));
    });
  }
  minimum.addEventListener("input", update);
  maxima.forEach(function (input) { input.addEventListener("input", update); });
  update();
})();
