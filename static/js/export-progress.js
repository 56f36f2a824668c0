// The export's detail page follows the worker (casino.exports.views.ExportProgressView): it asks the export's state
// every few seconds (as the server says: sooner at first, then less often), updates the state and the progress bar,
// and reloads once the export is done or failed to show the download or the error. Without script, « actualiser ».
document.addEventListener("DOMContentLoaded", () => {
  const following = document.getElementById("export-following");
  if (!following) return;
  const state = document.getElementById("export-state");
  const bar = document.getElementById("export-progress");
  const percent = document.getElementById("export-percent");
  const message = document.getElementById("export-message");
  const ask = async () => {
    let answer;
    try {
      const response = await fetch(following.dataset.progressUrl, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(String(response.status));
      answer = await response.json();
    } catch (error) {
      setTimeout(ask, 10000);  // the server is away for a moment: try again later, quietly
      return;
    }
    if (!answer.in_progress) {
      window.location.reload();
      return;
    }
    if (state.dataset.state !== answer.state) {
      state.dataset.state = answer.state;
      state.textContent = answer.state_label;
    }
    bar.value = answer.progress;
    bar.textContent = `${answer.progress} %`;
    percent.textContent = `${answer.progress} %`;
    if (message && answer.message && message.textContent !== answer.message) message.textContent = answer.message;
    setTimeout(ask, (answer.next_seconds || 2) * 1000);
  };
  setTimeout(ask, (Number(following.dataset.next) || 2) * 1000);
});
