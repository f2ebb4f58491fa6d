// The live parts of the sandox dashboard. Elements with data-live-html are
// replaced by each "html" event of their stream; a tbody with
// data-live-rows gets each "row" event of its stream as a new first row.
// EventSource reconnects by itself, sending the last row's id.
"use strict";
(function () {
  var open = 0;
  var dot = document.getElementById("live");
  function mark() {
    if (dot) dot.className = open > 0 ? "live on" : "live off";
  }
  function stream(url, event, fn) {
    var es = new EventSource(url);
    var up = false;
    es.addEventListener("open", function () { if (!up) { up = true; open++; mark(); } });
    es.addEventListener("error", function () { if (up) { up = false; open--; mark(); } });
    es.addEventListener(event, function (e) { fn(e.data); });
  }
  document.querySelectorAll("[data-live-html]").forEach(function (el) {
    stream(el.dataset.liveHtml, "html", function (html) { el.innerHTML = html; });
  });
  document.querySelectorAll("[data-live-rows]").forEach(function (tbody) {
    var url = tbody.dataset.liveRows;
    url += (url.indexOf("?") < 0 ? "?" : "&") + "after=" + encodeURIComponent(tbody.dataset.after || "0");
    stream(url, "row", function (html) {
      tbody.insertAdjacentHTML("afterbegin", html);
      while (tbody.rows.length > 500) tbody.deleteRow(-1);
    });
  });
  mark();
})();
