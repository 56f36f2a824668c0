// « Rien ne va plus »: the chef taps it when announcing; the time goes with the number tapped next.
(function () {
  var button = document.getElementById("rien-ne-va-plus");
  var field = document.getElementById("id_rien_ne_va_plus_at");
  var shown = document.getElementById("rnvp-time");
  if (!button || !field) return;
  button.addEventListener("click", function () {
    var now = new Date();
    field.value = now.toISOString();
    shown.textContent = "annoncé à " + now.toLocaleTimeString("fr-FR");
  });
})();
