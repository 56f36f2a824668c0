// The total of a count by denomination, as the croupier calls it out.
(function () {
  // « 16 000,00 € » with the narrow no-break space, as casino.web.formats.euros writes it on the server.
  var EUROS = new Intl.NumberFormat("fr-FR", { style: "currency", currency: "EUR" });
  var inputs = document.querySelectorAll("input.chip");
  var out = document.querySelector(".chips-total");
  if (!inputs.length || !out) return;
  function update() {
    var cents = 0;
    inputs.forEach(function (input) {
      var label = input.closest("label").textContent.replace(/[^0-9,]/g, "").replace(",", ".");
      cents += Math.round(parseFloat(label) * 100) * (parseInt(input.value, 10) || 0);
    });
    out.textContent = "Total : " + EUROS.format(cents / 100);
  }
  inputs.forEach(function (input) { input.addEventListener("input", update); });
  update();
})();
