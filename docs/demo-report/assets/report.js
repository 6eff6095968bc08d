// spamflow report: sort tables by a header click, filter the host table. No libraries.
"use strict";
(function () {
  function cellValue(row, index) {
    var text = row.cells[index] ? row.cells[index].textContent.trim() : "";
    var number = parseFloat(text);
    return text !== "" && !isNaN(number) && /^-?[\d.eE+-]+$/.test(text) ? number : text.toLowerCase();
  }
  function sortBy(table, index, header) {
    var body = table.tBodies[0];
    var ascending = !header.classList.contains("asc");
    Array.prototype.forEach.call(header.parentNode.cells, function (th) { th.classList.remove("asc", "desc"); });
    header.classList.add(ascending ? "asc" : "desc");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      if (x === "" && y !== "") { return 1; }
      if (y === "" && x !== "") { return -1; }
      var order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (!table.tHead) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.addEventListener("click", function () { sortBy(table, index, th); });
    });
  });
  var table = document.getElementById("host-table");
  var filter = document.getElementById("host-filter");
  var firedOnly = document.getElementById("host-fired-only");
  var spamOnly = document.getElementById("host-spam-only");
  var features = document.getElementById("host-features");
  var shown = document.getElementById("host-shown");
  function applyFilter() {
    var needle = filter.value.toLowerCase();
    var count = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var visible = row.textContent.toLowerCase().indexOf(needle) >= 0 &&
        (!firedOnly.checked || row.getAttribute("data-fired") !== "0") &&
        (!spamOnly || !spamOnly.checked || row.getAttribute("data-label") === "spam");
      row.style.display = visible ? "" : "none";
      if (visible) { count += 1; }
    });
    shown.textContent = count + " of " + table.tBodies[0].rows.length + " rows shown";
  }
  if (table && filter && firedOnly) {
    filter.addEventListener("input", applyFilter);
    firedOnly.addEventListener("change", applyFilter);
    if (spamOnly) { spamOnly.addEventListener("change", applyFilter); }
    applyFilter();
  }
  // the feature columns are behind a toggle: the findings (score, label, evidence) lead
  if (table && features) {
    features.addEventListener("change", function () {
      table.classList.toggle("features-hidden", !features.checked);
    });
  }
  // a link to evidence inside a collapsed list opens the list (and the browser scrolls to it)
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    for (var el = target; el; el = el.parentElement) {
      if (el.tagName === "DETAILS") { el.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
