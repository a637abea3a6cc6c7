// The Pi Context panel's page script: shows the body the extension sends and forwards clicks
// (and Enter/Space on a focused shape or link) on an entry or an action. No network, no library.
(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById("root");
  window.addEventListener("message", (e) => {
    const m = e.data;
    if (m && m.type === "render" && typeof m.html === "string") root.innerHTML = m.html;
  });
  function act(target) {
    const el = target && target.closest ? target.closest("[data-entry],[data-command]") : null;
    if (!el) return false;
    const command = el.getAttribute("data-command");
    if (command) {
      vscode.postMessage({ type: "command", command });
      return true;
    }
    const entryId = el.getAttribute("data-entry");
    if (entryId) {
      vscode.postMessage({ type: "reveal", entryId });
      return true;
    }
    return false;
  }
  document.addEventListener("click", (e) => {
    if (act(e.target)) e.preventDefault();
  });
  document.addEventListener("keydown", (e) => {
    if ((e.key === "Enter" || e.key === " ") && act(e.target)) e.preventDefault();
  });
  vscode.postMessage({ type: "ready" });
})();
