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
  var shown = document.getElementById("host-shown");
  function applyFilter() {
    var needle = filter.value.toLowerCase();
    var count = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var visible = row.textContent.toLowerCase().indexOf(needle) >= 0 &&
        (!firedOnly.checked || row.getAttribute("data-fired") !== "0");
      row.style.display = visible ? "" : "none";
      if (visible) { count += 1; }
    });
    shown.textContent = count + " of " + table.tBodies[0].rows.length + " rows shown";
  }
  if (table && filter && firedOnly) {
    filter.addEventListener("input", applyFilter);
    firedOnly.addEventListener("change", applyFilter);
    applyFilter();
  }
})();
