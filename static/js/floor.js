// Running timers of the interruptions; past the casino's limit of a short interruption the card turns red (R18).
(function () {
  var timers = document.querySelectorAll(".elapsed[data-since]");
  if (!timers.length) return;
  function tick() {
    var now = Date.now();
    timers.forEach(function (el) {
      var seconds = Math.max(0, Math.floor((now - Date.parse(el.dataset.since)) / 1000));
      var m = Math.floor(seconds / 60), s = seconds % 60;
      el.textContent = m + " min " + (s < 10 ? "0" : "") + s + " s";
      el.classList.toggle("late", m >= parseInt(el.dataset.limit, 10));
    });
  }
  tick();
  setInterval(tick, 1000);
})();
