// memlane ui: keyboard navigation of the hits and the health page's live progress.
// Written for this project; no library. Everything it shows comes from textContent, never HTML.
"use strict";

(function () {
  function hits() {
    return Array.prototype.slice.call(document.querySelectorAll("#hits .hit"));
  }

  function select(index) {
    var all = hits();
    if (!all.length) return;
    index = Math.max(0, Math.min(index, all.length - 1));
    all.forEach(function (hit, i) {
      hit.classList.toggle("selected", i === index);
    });
    var link = all[index].querySelector("a.open");
    link.focus();
    all[index].scrollIntoView({ block: "nearest" });
  }

  function current() {
    return hits().findIndex(function (hit) {
      return hit.classList.contains("selected");
    });
  }

  document.addEventListener("keydown", function (event) {
    var box = document.getElementById("q");
    var typing = event.target instanceof HTMLInputElement;
    if (event.key === "/" && !typing && box) {
      event.preventDefault();
      box.focus();
      box.select();
      return;
    }
    if (event.key === "ArrowDown") {
      if (!hits().length) return;
      event.preventDefault();
      select(current() + 1);
    } else if (event.key === "ArrowUp") {
      if (!hits().length) return;
      event.preventDefault();
      var at = current();
      if (at <= 0 && box) {
        hits().forEach(function (hit) { hit.classList.remove("selected"); });
        box.focus();
      } else {
        select(at - 1);
      }
    } else if (event.key === "Escape" && box) {
      box.focus();
    }
  });

  // Back to the search that opened this file, keeping its results.
  document.addEventListener("click", function (event) {
    var back = event.target.closest && event.target.closest("[data-back]");
    if (back && document.referrer.indexOf(location.origin + "/search") === 0) {
      event.preventDefault();
      history.back();
    }
  });

  // The highlighted lines of a hit: scroll to them when the address names none.
  function showHit() {
    var first = document.querySelector(".hit-line");
    if (first && !location.hash) first.scrollIntoView({ block: "center" });
  }

  function setText(id, text) {
    var node = document.getElementById(id);
    if (node && text !== undefined && text !== null) node.textContent = String(text);
  }

  var failures = 0;

  function showOffline(offline) {
    // The figures on the page are the last ones read: say so when the server stops answering.
    var note = document.getElementById("offline");
    if (offline && !note) {
      note = document.createElement("p");
      note.id = "offline";
      note.className = "warning";
      note.setAttribute("role", "alert");
      note.textContent = "The server is not answering: the figures below are the last ones it gave.";
      var main = document.querySelector("main") || document.body;
      main.insertBefore(note, main.firstChild);
    } else if (!offline && note) {
      note.remove();
    }
  }

  function poll() {
    if (document.hidden) {
      // A tab nobody looks at asks nothing (each status read counts the index).
      setTimeout(poll, 1000);
      return;
    }
    fetch("/status.json", { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.json();
      })
      .then(function (data) {
        var bar = document.getElementById("vector-progress");
        if (bar && data.vectors) {
          bar.max = Math.max(data.vectors.total, 1);
          bar.value = data.vectors.done;
        }
        var text = document.getElementById("vector-text");
        if (text) {
          text.textContent = data.vectorsText;
          var done = !data.vectors || data.vectors.done >= data.vectors.total;
          text.dataset.state = done ? "complete" : "running";
        }
        setText("files", data.files.toLocaleString("en"));
        setText("chunks", data.chunks.toLocaleString("en"));
        setText("last-sync", data.lastSyncedAt || "never");
        setText("dirty", data.dirty ? "yes" : "no");
        setText("first-sync", data.firstSyncDone ? "done" : "running");
        document.body.dataset.polled = String(Number(document.body.dataset.polled || 0) + 1);
        failures = 0;
        delete document.body.dataset.pollError;
        showOffline(false);
      })
      .catch(function () {
        failures += 1;
        document.body.dataset.pollError = "1";
        showOffline(true);
      })
      .finally(function () {
        // Asked less often while the server is away: one second, doubling to half a minute.
        setTimeout(poll, Math.min(30000, 1000 * Math.pow(2, Math.min(failures, 5))));
      });
  }

  document.addEventListener("DOMContentLoaded", function () {
    showHit();
    if (document.body.dataset.page === "status") poll();
  });
})();
