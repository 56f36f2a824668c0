// Running timers of the interruptions; past the casino's limit of a short interruption the card turns red (R18).
// The timers are looked up at each tick: htmx swaps the floor's live part every 5 s (templates/cashbox/_floor_live.html).
(function () {
  function tick() {
    var now = Date.now();
    document.querySelectorAll(".elapsed[data-since]").forEach(function (el) {
      var seconds = Math.max(0, Math.floor((now - Date.parse(el.dataset.since)) / 1000));
      var m = Math.floor(seconds / 60), s = seconds % 60;
      el.textContent = m + " min " + (s < 10 ? "0" : "") + s + " s";
      if (m >= parseInt(el.dataset.limit, 10)) el.classList.add("late");
    });
  }
  tick();
  setInterval(tick, 1000);
  document.addEventListener("htmx:afterSwap", tick);
})();
